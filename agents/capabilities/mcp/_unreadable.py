"""A message from the server that the SDK cannot read: the requests waiting end at once.

A message the SDK's JSON parser cannot take (JSON nested deeper than it goes, some 200 levels; a
line that is not JSON; a JSON-RPC message it cannot validate) is dropped by the SDK, unread, and
its stdio transport cannot tell which request the line answered: that request waited for its
whole `timeout` (60 s by default). The SDK hands the session the parse error instead, and the
session gives it to its `message_handler` (the SDK's public hook, which receives the transport's
exceptions as well as the server's notifications): `PendingRequests.on_message` then ends every
request waiting on a stdio session (a tool call, a listing) with `UnreadableMessage`, since one
of them will never be answered and which one cannot be known. With none waiting (a server that
writes a banner on its stdout, which MCP forbids) it is a warning `mcp_unreadable_message`, and
the session goes on.

Over Streamable HTTP each request's answer comes in a response of its own, and the SDK answers
the request itself with a JSON-RPC parse error when it cannot read the body or the SSE event
(`Failed to parse JSON response: ...`): `PendingRequests.during` turns that into the same
`UnreadableMessage`. What else cannot be read over HTTP (an event of the GET stream, which
carries no answers) is only a warning.

Both ways, the SDK's words about the message quote it (pydantic's `input_value`: cut short, but
the server's own text): the error says what kind of fault it was, in the parser's terms, and
never quotes the message.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from network.logger import LazyLogger

_log = LazyLogger("agents.mcp")

T = TypeVar("T")

PARSE_ERROR = -32700  # JSON-RPC's code, which the SDK gives the parse errors it answers with
SDK_PARSE_FAILURES = ("Failed to parse JSON response: ", "Failed to parse SSE message: ")
NOT_JSON_RPC = "not a valid JSON-RPC message"
MAX_PROBLEMS = 3  # validation problems named
MAX_WHERE = 60  # characters of a problem's location (a key of the message may be in it)
MAX_WHY = 100  # characters of a problem's reason (pydantic's words)
MAX_OTHER = 300  # characters of an error that is not pydantic's (another transport's)

# pydantic's text of one problem: its location on a line of its own, unless the message as a
# whole is at fault, then the reason and `[type=...`, before the input is quoted (whose repr
# has no line breaks)
_INVALID_JSON = re.compile(r"^  Invalid JSON: ([^\n]*?) \[type=json_invalid", re.MULTILINE)
_PROBLEM = re.compile(r"^(\S[^\n]*)\n  ([^\n]*?) \[type=", re.MULTILINE)


class UnreadableMessage(Exception):
    """The server sent a message the SDK could not read while a request waited for its answer.

    Its text says what was wrong with the message, without quoting it.
    """


class _Waiting:
    """One request waiting for its answer, and the error that ended it, if one did."""

    __slots__ = ("error", "scope")

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.error: UnreadableMessage | None = None


class PendingRequests:
    """The requests of one session waiting for their answers (see the module docstring).

    Args:
        server_name: the server's name, read when a warning is logged (a server given no
            `name=` is named by the handshake).
        one_stream: whether every answer comes on one stream (stdio), so that a message that
            cannot be read may be the answer of any request waiting.
    """

    def __init__(self, server_name: Callable[[], str], *, one_stream: bool) -> None:
        self._server_name = server_name
        self._one_stream = one_stream
        self._waiting: set[_Waiting] = set()

    async def during(self, request: Callable[[], Awaitable[T]]) -> T:
        """`await request()`, or `UnreadableMessage` as soon as the server sends what cannot
        be read while it waits. A request ended so is cancelled (the SDK tells the server)."""
        waiting = _Waiting()
        self._waiting.add(waiting)
        try:
            with waiting.scope:
                return await request()
        except Exception as exc:
            # over HTTP: the SDK's own answer for this request (over stdio, an error of these
            # words can only be the server's, which the caller tells as the server's error)
            why = None if self._one_stream else sdk_parse_failure(exc)
            if why is None:
                raise
            self._warn(why, 1)
            raise UnreadableMessage(why) from exc
        finally:
            self._waiting.discard(waiting)
        # reached only when `on_message` cancelled the scope: the return above never ran
        raise waiting.error or UnreadableMessage("ended")

    async def on_message(self, message: Any) -> None:
        """The SDK session's `message_handler`: an exception ends the requests waiting."""
        if not isinstance(message, Exception):
            return  # a server notification: progress and the like reach their own callbacks
        why = unreadable_reason(message)
        ended = list(self._waiting) if self._one_stream else []
        error = UnreadableMessage(why)
        for waiting in ended:
            self._waiting.discard(waiting)
            waiting.error = error
            waiting.scope.cancel()
        self._warn(why, len(ended))

    def _warn(self, why: str, ended: int) -> None:
        _log.warning(
            "mcp_unreadable_message", server=self._server_name(), why=why, requests_ended=ended
        )


def unreadable_reason(exc: Exception) -> str:
    """What was wrong with the message the SDK could not read, without quoting it."""
    from pydantic import ValidationError  # noqa: PLC0415 (loaded with the SDK by now)

    if not isinstance(exc, ValidationError):
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return text if len(text) <= MAX_OTHER else f"{text[:MAX_OTHER]}..."
    problems = exc.errors(include_url=False, include_input=False, include_context=False)
    for problem in problems:
        if problem["type"] == "json_invalid":  # "Invalid JSON: expected value at line 1 ..."
            return _invalid_json(problem["msg"].removeprefix("Invalid JSON: "))
    return _not_json_rpc(
        [(".".join(str(part) for part in problem["loc"]), problem["msg"]) for problem in problems]
    )


def sdk_parse_failure(exc: Exception) -> str | None:
    """What was wrong with a message, when `exc` is the SDK's own answer to a request whose
    answer it could not read (over HTTP), else None."""
    if getattr(getattr(exc, "error", None), "code", None) != PARSE_ERROR:
        return None  # not an MCPError, or not a parse error
    text = str(exc)
    if not text.startswith(SDK_PARSE_FAILURES):
        return None  # a server's own parse error: of the request it was sent
    invalid = _INVALID_JSON.search(text)
    if invalid is not None:
        return _invalid_json(invalid.group(1))
    return _not_json_rpc(_PROBLEM.findall(text))


def _invalid_json(why: str) -> str:
    return f"invalid JSON: {why[:MAX_WHY]}"


def _not_json_rpc(problems: list[tuple[str, str]]) -> str:
    """Where, in the SDK's model names and the protocol's fields, and why: the first few."""
    shown = problems[:MAX_PROBLEMS]
    listed = "; ".join(f"{where[:MAX_WHERE]}: {why[:MAX_WHY]}" for where, why in shown)
    more = f" and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
    return f"{NOT_JSON_RPC}: {listed}{more}" if listed else NOT_JSON_RPC
