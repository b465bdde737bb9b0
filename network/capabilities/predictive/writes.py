"""Predictive state on the tool side: when a tool call runs, the predicted keys take its
arguments' final values (replacing them, through the schema) before the tool's own function
runs, so a failing tool or a value the schema rejects leaves nothing behind. Without
`tool_argument` the whole argument object is the value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from network.history.messages import ToolCall
from network.run.agent_call import ToolLike
from network.run.predictive_config import predicted_values
from network.state.handlers import replace_values
from network.state.kv import KV


def write_predicted(
    predict_state: Mapping[str, Any], tool: ToolLike, call: ToolCall, kv: KV
) -> None:
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
