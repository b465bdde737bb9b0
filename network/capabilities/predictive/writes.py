"""Predictive state on the tool side: when a tool call runs, the predicted keys take its
arguments' final values (replacing them, through the schema) before the tool's own function
runs, so a failing tool or a value the schema rejects leaves nothing behind. Without
`tool_argument` the whole argument object is the value. A call handed to a client (a frontend
tool) writes them when it is handed over (`commit_handed`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from network.errors import StateError
from network.history.messages import ToolCall
from network.history.results import ToolCallRecord
from network.run.agent_call import AgentCall, ToolLike
from network.run.predictive_config import predicted_values
from network.state.handlers import replace_values
from network.state.kv import KV
from network.state.provenance import tool_writer


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


def commit_handed(
    predict_state: Mapping[str, Any], agent_call: AgentCall, running: list[ToolCall]
) -> None:
    """The predicted keys of the answer's calls handed to a client (an AG-UI client's
    frontend tool, an agent's `client_tool`) take their arguments' values now, as a server
    tool's would when it runs: the call's arguments are final, and the client shows the value.

    A value the schema refuses takes the call back from the client: it becomes an error
    result the model reads (`AgentCall.set_aside`), and none of its writes stay.
    """
    run = agent_call.run
    pending = run.engine.pending_tool_calls
    if not pending or agent_call.response is None:
        return
    handed = {call.id for call in pending}
    staying = {call.id for call in running}
    refused: set[str] = set()
    kv: Any = run.state.kv
    previous = kv.writer
    for call in agent_call.response.message.tool_calls or ():
        if call.id not in handed or call.id in staying:
            continue  # not this answer's, or run here (`write_predicted` then)
        writes = predicted_values(predict_state, call)
        if not writes:
            continue
        kv.writer = tool_writer(agent_call.agent.name, run.call_count, call.name, call.id)
        mark = kv.savepoint()
        try:
            for key, value in writes:
                kv.set(key, value, replace_values)
        except StateError as exc:
            kv.rollback(mark)
            refused.add(call.id)
            message = f"tool {call.name!r} state update failed: {exc}"
            agent_call.set_aside(
                ToolCallRecord.failed(call, message, type(exc).__name__, time.perf_counter())
            )
        else:
            kv.release(mark)
        finally:
            kv.writer = previous
    if refused:
        run.engine.pending_tool_calls = tuple(c for c in pending if c.id not in refused)
