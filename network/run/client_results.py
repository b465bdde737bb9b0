"""Continuing a run that stopped on client tool calls, with their results.

    result = await network.run("Book me a room")          # stop_reason "client_tool"
    call = result.pending_tool_calls[0]
    answer = ask_the_user(call.arguments)                   # the tool runs out here
    result = await network.run(result.tool_results({call.id: answer}))

The new run starts from the stopped run's state and conversation, plus one tool message per
pending call (a string result as it is, anything else as JSON), so the model reads the
results; then the router is asked as at the start of any run. Every pending call needs a
result, and only those: anything else is a `ClientToolError` naming the call, and nothing
runs. A run saved to a thread continues on that thread (the tool messages are committed with
the next agent call). Over AG-UI the client sends the results in its next request instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from network.errors import AgentNetworkError
from network.history.messages import ToolMessage
from network.run.result import RunResult


class ClientToolError(AgentNetworkError):
    """Results that do not match a run's pending client tool calls."""


def _text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(result, default=str, ensure_ascii=False)


def result_messages(stopped: RunResult, results: Mapping[str, Any]) -> list[ToolMessage]:
    """One tool message per pending call of `stopped`, or `ClientToolError` saying what is off."""
    pending = list(stopped.pending_tool_calls)
    if not pending:
        raise ClientToolError(f"run {stopped.run_id!r} did not stop on a client tool call")
    known = {call.id for call in pending}
    unknown = [call_id for call_id in results if call_id not in known]
    if unknown:
        raise ClientToolError(
            f"run {stopped.run_id!r} has no pending tool call {unknown[0]!r} "
            f"(pending: {', '.join(sorted(known))})"
        )
    missing = [f"{call.id} ({call.name})" for call in pending if call.id not in results]
    if missing:
        raise ClientToolError(
            f"run {stopped.run_id!r}: no result for pending tool call {', '.join(missing)}"
        )
    return [ToolMessage(call.id, _text(results[call.id]), call.name) for call in pending]
