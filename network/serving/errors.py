"""`RequestError`: a request a server refuses before anything runs, whatever its protocol.

It carries an HTTP status (the lingua franca of refusals: AG-UI and A2A answer over HTTP with
it, a JSON-RPC or MCP server maps it to its own error), a stable `code` a client can branch
on, a message written for a person, and the field or state key at fault when there is one.

Messages quote what the client sent (a message id, a key, a tool call id), which a hostile
client can make as long as its body allows (1 MiB): the message and the key are cut to
`MAX_MESSAGE` and `MAX_KEY` characters, so a refusal is never an echo of the request, in the
answer or in the server's log.
"""

from __future__ import annotations

from typing import Any

MAX_MESSAGE = 2000  # characters of a refusal's message
MAX_KEY = 300  # characters of the key it names (longer than any key a store keeps)
THREAD_BUSY_RETRY_AFTER = 1  # seconds: a run's step takes about as long; its end frees the thread


class RequestError(Exception):
    """Answered with `status` and a JSON body `{"error": {"code", "message", "key"?}}`.

    Nothing of the request has been applied when this is raised: no run started, the thread's
    state and pending interrupts are as they were.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        key: str | None = None,
        retry_after: int | None = None,
    ) -> None:
        message = _cut(message, MAX_MESSAGE)
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.key = None if key is None else _cut(key, MAX_KEY)
        # seconds, for a refusal that passes (503 `server_busy`, 409 `thread_busy`)
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        """The HTTP headers the answer carries: `Retry-After` when the refusal passes."""
        return {} if self.retry_after is None else {"retry-after": str(self.retry_after)}

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.key is not None:
            error["key"] = self.key
        return {"error": error}


def _cut(text: str, limit: int) -> str:
    """`text`, or its start and how long it was when it is over `limit` characters."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def thread_busy(thread_id: str, detail: str = "") -> RequestError:
    """409 `thread_busy`: `thread_id` has a run under way (its run lease is held), with a
    `Retry-After` of `THREAD_BUSY_RETRY_AFTER` seconds, as the thread frees when that run ends.
    `detail` (the run's id, when known) follows the thread's id in the message."""
    return RequestError(
        409,
        "thread_busy",
        f"thread {thread_id!r} has a run under way{detail}; wait for it to finish",
        retry_after=THREAD_BUSY_RETRY_AFTER,
    )
