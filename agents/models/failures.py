"""What went wrong with a model call, in words a person can act on; shared by both clients.

A failure is described by what happened (connection refused, timed out, HTTP status with the
server's own message, authentication, a malformed or empty answer), whether retrying can help,
and the URL it happened at, with any credentials in it removed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

RETRY_STATUS = frozenset({408, 409, 429})
_MAX_DETAIL = 500


@dataclass(slots=True, frozen=True)
class Failure:
    """One failed attempt: `kind` says what happened, `detail` adds the server's words."""

    kind: str
    detail: str = ""
    status: int | None = None
    retryable: bool = False

    def describe(self) -> str:
        return f"{self.kind}: {self.detail}" if self.detail else self.kind


def http_failure(status: int, body: bytes | str) -> Failure:
    """An HTTP error answer: its status and the message the server put in the body."""
    return status_failure(status, server_message(body))


def status_failure(status: int, detail: str) -> Failure:
    """An HTTP status with what the server said: retryable when 408, 409, 429 or 5xx."""
    if status in (401, 403):
        return Failure(f"authentication failed (HTTP {status})", detail, status, False)
    retryable = status in RETRY_STATUS or status >= 500
    return Failure(f"HTTP {status}", detail, status, retryable)


def server_message(body: bytes | str | Any) -> str:
    """The human part of an error body: OpenAI's `{"error": {"message"}}` and its cousins."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    data: Any = body
    if isinstance(body, str):
        try:
            data = json.loads(body)
        except ValueError:
            return _short(body.strip())
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data.get("message")))
        if isinstance(error, dict):
            error = error.get("message") or error
        if error is not None:
            return _short(error if isinstance(error, str) else json.dumps(error))
    return _short(json.dumps(data) if not isinstance(data, str) else data)


def transport_failure(exc: BaseException) -> Failure | None:
    """A network failure found anywhere in `exc`'s cause chain, or None if there is none.

    The most telling link wins (refused, then timed out, then any connection failure). Links
    are recognised by class name as well as by type, so litellm's and the openai SDK's
    wrappers, which keep the network error as a cause, need not be imported.
    """
    chain = cause_chain(exc)
    for link in chain:
        if isinstance(link, ConnectionRefusedError) or "connection refused" in str(link).lower():
            return Failure("connection refused", _short(str(link)), None, True)
    for link in chain:
        if isinstance(link, TimeoutError) or "timeout" in type(link).__name__.lower():
            return Failure("timed out", _short(str(link)), None, True)
    for link in chain:
        name = type(link).__name__
        if isinstance(link, ConnectionError) or name in _TRANSPORT_NAMES:
            return Failure("connection failed", _short(f"{name}: {link}"), None, True)
    return None


def cause_chain(exc: BaseException) -> list[BaseException]:
    """`exc`, its cause (or context), that one's, and so on."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


_TRANSPORT_NAMES = frozenset(
    {
        "ConnectError",
        "ReadError",
        "WriteError",
        "RemoteProtocolError",
        "LocalProtocolError",
        "NetworkError",
        "TransportError",
        "ProxyError",
        "APIConnectionError",
        "ServerDisconnectedError",
        "ClientConnectionError",
        "IncompleteRead",
        "EndOfStream",
        "BrokenResourceError",
        "ClosedResourceError",
    }
)


def safe_url(url: str) -> str:
    """`url` without user name, password, query or fragment: what an error may show."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."
