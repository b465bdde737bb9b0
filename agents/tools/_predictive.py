"""Predictive state on the tool side: which state keys a tool call's arguments set.

A network's `predict_state={"recipe": {"tool": "create_recipe", "tool_argument": "data"}}`
says that `create_recipe`'s `data` argument is the new value of state key `recipe`. While the
model streams the arguments, AG-UI consumers are shown the value as it grows (see
`network.run.predictive`); when the tool runs, the argument's final value is written to the
key (replacing it, through the schema) before the tool's own function runs, so a failing tool
or a value the schema rejects leaves nothing behind. Without `tool_argument` the whole
argument object is the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.tools.tool import Tool
from network.history.messages import ToolCall
from network.state.handlers import replace_values
from network.state.kv import KV


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


def write_predicted(predict_state: Mapping[str, Any], tool: Tool, call: ToolCall, kv: KV) -> None:
    """Write the call's predicted keys to `kv`.

    The arguments are checked first (`ToolError`), so the model hears about its arguments
    before anything about state; a value the schema refuses raises the schema's error.
    """
    writes = predicted_values(predict_state, call)
    if not writes:
        return
    tool.validate(call.arguments)
    for key, value in writes:
        kv.set(key, value, replace_values)
