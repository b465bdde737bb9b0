"""Over stdio, a line that is not a JSON-RPC message gets the error JSON-RPC 2.0 asks for.

The SDK's stdio transport hands such a line on as an exception, which its server drops without
a word: a client that sent garbage or a batch array (MCP has none since 2025-06-18) waited for
an answer that never came (over Streamable HTTP the SDK answers 400). Here each one is
answered, with `"id": null` since none could be read: `-32700` (parse error) for a line that
is not JSON (or nests deeper than the parser reads, which the message says), `-32600`
(invalid request) for JSON that is not one JSON-RPC message. The answer echoes nothing of the
line.

A request whose `id` is no string or integer (null, a fraction, a bool, an object) the SDK
reads as a notification, which gets no answer: given the lines the SDK read
(`network.mcp.stdin_lines`), the relay looks at the line of each notification, and answers one
that has an `id` with `-32600` (`network.mcp.request_ids`) instead of passing it on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from network.mcp.request_ids import NOT_ONE_MESSAGE, invalid_id_error, unusable_id

if TYPE_CHECKING:
    from network.mcp.stdin_lines import StdinLines

PARSER_DEPTH = 200  # about the levels of JSON the SDK's parser (pydantic's) reads


@asynccontextmanager
async def answering_bad_lines(
    read: Any, write: Any, lines: StdinLines | None = None
) -> AsyncIterator[Any]:
    """The messages of `read` (the SDK's stdio read stream), each bad line answered on `write`
    instead of passed on; with `lines` (the lines the SDK's transport read, one per item of
    `read`), a request with an unusable `id` too."""
    from mcp.shared.message import SessionMessage  # noqa: PLC0415 (mcp)
    from mcp.types import JSONRPCError, JSONRPCNotification  # noqa: PLC0415 (mcp)

    send, receive = anyio.create_memory_object_stream[Any](0)

    async def relay() -> None:
        async with send:
            try:
                async for item in read:
                    line = lines.taken() if lines is not None else None
                    if isinstance(item, Exception):
                        await write.send(SessionMessage(_error_for(item)))
                    elif (
                        line is not None
                        and isinstance(item.message, JSONRPCNotification)
                        and (kind := unusable_id(_parsed(line))) is not None
                    ):
                        answer = JSONRPCError.model_validate(invalid_id_error(kind))
                        await write.send(SessionMessage(answer))
                    else:
                        await send.send(item)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the server is gone (it ended, or failed): its own error is the one told

    async with anyio.create_task_group() as group:
        group.start_soon(relay)
        async with receive:
            yield receive
        group.cancel_scope.cancel()


def _parsed(line: str) -> Any:
    """The JSON of `line`, which the SDK has read as a notification (so it parses), or None."""
    import pydantic_core  # noqa: PLC0415 (the SDK's parser: reads what the SDK read)

    try:
        return pydantic_core.from_json(line)
    except ValueError:
        return None


def _error_for(problem: Exception) -> Any:
    """The JSON-RPC error answering a line the transport could not read as a message."""
    from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError  # noqa: PLC0415

    errors = getattr(problem, "errors", None)
    found = errors(include_url=False, include_input=False) if callable(errors) else []
    kinds = {error.get("type") for error in found}
    deep = any("recursion limit" in str(error.get("msg", "")) for error in found)
    if "json_invalid" in kinds and deep:  # JSON, but nested past what the parser reads
        message = f"Parse error: the line nests deeper than the {PARSER_DEPTH} levels read"
        error = ErrorData(code=PARSE_ERROR, message=message)
    elif "json_invalid" in kinds:
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
    else:
        error = ErrorData(code=INVALID_REQUEST, message=NOT_ONE_MESSAGE)
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)
