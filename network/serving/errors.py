"""`RequestError`: a request a server refuses before anything runs, whatever its protocol.

It carries an HTTP status (the lingua franca of refusals: AG-UI and A2A answer over HTTP with
it, a JSON-RPC or MCP server maps it to its own error), a stable `code` a client can branch
on, a message written for a person, and the field or state key at fault when there is one.
"""

from __future__ import annotations

from typing import Any


class RequestError(Exception):
    """Answered with `status` and a JSON body `{"error": {"code", "message", "key"?}}`.

    Nothing of the request has been applied when this is raised: no run started, the thread's
    state and pending interrupts are as they were.
    """

    def __init__(self, status: int, code: str, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.key = key

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.key is not None:
            error["key"] = self.key
        return {"error": error}
