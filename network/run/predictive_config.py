"""Checking a network's `predict_state` when the network is defined.

`predict_state={"recipe": {"tool": "create_recipe", "tool_argument": "recipe_data"}}`: while
`create_recipe`'s arguments stream, AG-UI consumers see `recipe` take the value of its
`recipe_data` argument (`network.capabilities.predictive`), and the value is written to `recipe`
when the tool runs. Without `tool_argument` the whole argument object is the value.

The tool may be one of the network's agents' tools, or a client tool: an agent's own
`client_tool(...)`, or one the run's caller declares (an AG-UI client's frontend tool, as the
AG-UI dojo's predictive-state page declares `write_document`). A name none of the agents has is
therefore not an error here: it is a tool a caller declares, and in a run whose caller does
not declare it the entry does nothing (no run offers the model that tool).

Kept apart from the predictive-state events so defining a network imports no AG-UI code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from network.errors import ConfigurationError, StateError
from network.history.messages import ToolCall
from network.run.context import NetworkLike, RunContext
from network.state.schema import check_key_form


def check_predict_state(
    network: NetworkLike, predict_state: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """The validated `predict_state`, or `ConfigurationError` naming the bad entry.

    The key must be one the tool's commit can write: a state key of any schema (no NUL or
    lone surrogate, not the conversation's name), and a declared one when the schema is
    closed; else every call of the tool would fail its state update at run time, after the
    model was paid for."""
    if not isinstance(predict_state, Mapping):
        raise ConfigurationError(
            f"network {network.name!r}: predict_state must be a mapping "
            "{state_key: {'tool': name, 'tool_argument': name}}, "
            f"got {type(predict_state).__name__}"
        )
    checked: dict[str, dict[str, Any]] = {}
    schema = network.schema
    for key, spec in predict_state.items():
        where = f"network {network.name!r}: predict_state[{key!r}]"
        if not isinstance(key, str) or not key:
            raise ConfigurationError(f"{where}: state keys are non-empty strings")
        try:
            check_key_form(key)
        except StateError as exc:
            raise ConfigurationError(f"{where}: {exc}") from exc
        if schema.closed and key not in schema:
            raise ConfigurationError(f"{where}: the key is not declared and the schema is closed")
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
        if not spec["tool"]:
            raise ConfigurationError(f"{where}: tool must be a tool's name, got ''")
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


def offered_tools(ctx: RunContext) -> set[str]:
    """The names of the tools run `ctx` offers a model: its agents' tools and client tools,
    and the client tools its caller declared."""
    names = {tool.name for tool in ctx.engine.client_tools}
    for agent in ctx.network.agents.values():
        names.update(getattr(agent, "tools", ()))
        names.update(getattr(agent, "client_tools", ()))
    return names
