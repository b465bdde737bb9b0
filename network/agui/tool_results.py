"""Tool results a client may send: only for tool calls the server issued on the thread, and
only the result the thread already knows, once it knows one.

A client rebuilds tool messages from the TOOL_CALL_RESULT events it was sent, and answers the
calls of its own tools (client-declared tools, `network.run.client_tools`) with new ones. Both
carry the id of a call the server streamed (TOOL_CALL_START) on that thread; the record keeps
each such id with a digest of its result (`ThreadRecord.issued_calls`): the server tool's
result as streamed, or the client's first answer to a client tool. A tool message for any
other id is refused with 422 `unknown_tool_call`; one whose content differs from the known
result with 422 `tool_result_changed`; one for a call of the server's own tool that has no
result yet (held for confirmation, or its run ended before the tool returned: `SERVER_CALL`)
with 422 `unknown_tool_call`, as only the server answers it. Either way the model never reads
a result the client made up.
"""

from __future__ import annotations

from typing import Any

from network.history.messages import ToolMessage
from network.serving.errors import RequestError
from network.serving.registry import SERVER_CALL, ThreadRecord, result_digest


def check_tool_results(record: ThreadRecord, messages: list[Any]) -> None:
    """A 422 `RequestError` for the first tool message the thread cannot vouch for."""
    seen: dict[str, str] = {}
    for message in messages:
        if not isinstance(message, ToolMessage):
            continue
        call_id = message.tool_call_id
        if call_id not in record.issued_calls:
            raise RequestError(
                422,
                "unknown_tool_call",
                f"message {message.id!r} is a result for tool call {call_id!r}, "
                f"which was not issued on thread {record.thread_id!r}",
            )
        known = record.issued_calls[call_id] or seen.get(call_id)
        if known == SERVER_CALL:  # e.g. a call held for confirmation: `resume` answers it
            raise RequestError(
                422,
                "unknown_tool_call",
                f"message {message.id!r} is a result for tool call {call_id!r}, a call of a "
                f"server tool on thread {record.thread_id!r} that only the server answers",
            )
        digest = result_digest(message.content)
        if known is not None and known != digest:
            raise RequestError(
                422,
                "tool_result_changed",
                f"message {message.id!r}: the result of tool call {call_id!r} differs from "
                f"the one thread {record.thread_id!r} already has",
            )
        seen[call_id] = digest


def pin_results(record: ThreadRecord, messages: Any) -> None:
    """Remember the client's first answers to client tool calls (after the request passed)."""
    for message in messages:
        if (
            isinstance(message, ToolMessage)
            and record.issued_calls.get(message.tool_call_id, "") is None
        ):
            record.issued_calls[message.tool_call_id] = result_digest(message.content)
