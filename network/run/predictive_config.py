"""Checking a network's `predict_state` when the network is defined.

`predict_state={"recipe": {"tool": "create_recipe", "tool_argument": "recipe_data"}}`: while
`create_recipe`'s arguments stream, AG-UI consumers see `recipe` take the value of its
`recipe_data` argument (`network.capabilities.predictive`), and the value is written to `recipe`
when
the tool runs . Without `tool_argument` the whole argument object is the
value. Kept apart from the predictive-state events so defining a network imports no AG-UI code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from network.errors import ConfigurationError
from network.history.messages import ToolCall
from network.run.context import NetworkLike


def check_predict_state(
    network: NetworkLike, predict_state: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """The validated `predict_state`, or `ConfigurationError` naming the bad entry."""
    checked: dict[str, dict[str, Any]] = {}
    tools = {name for agent in network.agents.values() for name in getattr(agent, "tools", {})}
    for key, spec in predict_state.items():
        where = f"network {network.name!r}: predict_state[{key!r}]"
        if not isinstance(key, str) or not key:
            raise ConfigurationError(f"{where}: state keys are non-empty strings")
        if not isinstance(spec, Mapping) or not isinstance(spec.get("tool"), str):
            raise ConfigurationError(
                f"{where} must be {{'tool': name, 'tool_argument': name}}, got {spec!r}"
            )
        unknown = set(spec) - {"tool", "tool_argument"}
        if unknown:
            raise ConfigurationError(f"{where} has unknown fields {sorted(unknown)}")
        argument = spec.get("tool_argument")
        if argument is not None and not isinstance(argument, str):
            raise ConfigurationError(f"{where}: tool_argument must be a string")
        if spec["tool"] not in tools:
            raise ConfigurationError(
                f"{where} names tool {spec['tool']!r}, which no agent of the network has"
            )
        checked[key] = dict(spec)
    return checked


def predicted_values(predict_state: Mapping[str, Any], call: ToolCall) -> list[tuple[str, Any]]:
    """`(state_key, value)` for every predicted key this call's arguments set."""
    arguments = call.arguments
    if not isinstance(arguments, dict):
        return []
    found = []
    for key, spec in predict_state.items():
        if spec.get("tool") != call.name:
            continue
        argument = spec.get("tool_argument")
        if argument is None:
            found.append((key, arguments))
        elif argument in arguments:
            found.append((key, arguments[argument]))
    return found
