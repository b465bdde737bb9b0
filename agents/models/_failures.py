"""What went wrong with a model call, in words a person can act on; shared by both clients.

A failure is described by what happened (connection refused, timed out, HTTP status with the
server's own message, authentication, a malformed or empty answer), whether retrying can help,
and the URL it happened at, with any credentials in it removed.
"""

from __future__ import annotations

import errno
import json
import sys
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
    """A network failure found anywhere in `exc`'s chain of causes, or None if there is none.

    The most telling link wins (refused, then timed out, then any connection failure). A link
    counts by what it is, never by its name or text: an `OSError` refused by the peer
    (`ECONNREFUSED`), a timeout (`TimeoutError`, httpx's timeouts), or an error of the
    transport itself (a `ConnectionError`, httpx's `TransportError`, aiohttp's connection and
    payload errors, anyio's closed streams, a truncated HTTP body). A client library's own
    wrapper ("APIConnectionError", which litellm also raises for failures that are not about
    the network at all) counts only through the transport error it wraps.
    """
    found = transport_link(exc)
    if found is None:
        return None
    kind, link = found
    if kind == "connection failed":
        return Failure(kind, _short(f"{type(link).__name__}: {link}"), None, True)
    return Failure(kind, _short(str(link)), None, True)


def transport_link(exc: BaseException) -> tuple[str, BaseException] | None:
    """What `transport_failure` found: its kind, and the link of `exc`'s chain it found it in
    (the transport's own exception, which a client library's wrapper may hide)."""
    chain = cause_chain(exc)
    for link in chain:
        if _refused(link):
            return "connection refused", link
    for link in chain:
        if isinstance(link, (TimeoutError, *_loaded_types(_TIMEOUT_TYPES))):
            return "timed out", link
    for link in chain:
        if isinstance(link, (ConnectionError, *_loaded_types(_TRANSPORT_TYPES))):
            return "connection failed", link
    return None


def answered_status(exc: BaseException) -> tuple[int, str] | None:
    """The HTTP status a server really answered with, and its words, if `exc` holds one.

    Only an HTTP client's own record of an answer counts (httpx's `HTTPStatusError`, which
    carries the response): a wrapper's `status_code` may be made up, as litellm's "500" for a
    refused connection, missing credentials or a stream that broke after a 200.
    """
    httpx = sys.modules.get("httpx")
    if httpx is None:  # no httpx loaded: no answer can have come through it
        return None
    for link in cause_chain(exc):
        if isinstance(link, httpx.HTTPStatusError):
            response = link.response
            try:
                words = server_message(response.content)
            except httpx.ResponseNotRead:  # a streamed answer whose body was never read
                words = ""
            return response.status_code, words
    return None


def server_body(exc: BaseException) -> str | None:
    """What the server itself said in an error it sent (the openai SDK's `APIError.body`,
    which litellm keeps): the server's words, or None when no link carries a body."""
    for link in cause_chain(exc):
        body = getattr(link, "body", None)
        if isinstance(body, dict | str) and body:
            return server_message(json.dumps(body) if isinstance(body, dict) else body)
    return None


def cause_chain(exc: BaseException) -> list[BaseException]:
    """`exc` and every exception it was raised from, nearest first.

    Follows `__cause__`, `__context__` and `original_exception` (where litellm's exceptions,
    which it documents as keeping the provider's error, keep it while the others may point at
    an unrelated exception of its own bookkeeping).
    """
    chain: list[BaseException] = []
    pending: list[BaseException | None] = [exc]
    while pending and len(chain) < _MAX_CHAIN:
        current = pending.pop(0)
        if current is None or any(current is seen for seen in chain):
            continue
        chain.append(current)
        original = getattr(current, "original_exception", None)
        if isinstance(original, BaseException):
            pending.append(original)
        pending += [current.__cause__, current.__context__]
    return chain


_MAX_CHAIN = 64  # a hostile or buggy chain cannot make a failure's description expensive

# The transport layers' own exception types, by module and name: looked up only in modules
# already imported (a library not loaded cannot have raised), so nothing here imports them.
_TIMEOUT_TYPES = (("httpx", "TimeoutException"),)
_TRANSPORT_TYPES = (
    ("httpx", "TransportError"),
    ("aiohttp", "ClientConnectionError"),
    ("aiohttp", "ClientPayloadError"),
    ("anyio", "EndOfStream"),
    ("anyio", "BrokenResourceError"),
    ("anyio", "ClosedResourceError"),
    ("http.client", "IncompleteRead"),
)


def _loaded_types(names: tuple[tuple[str, str], ...]) -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = []
    for module_name, name in names:
        module = sys.modules.get(module_name)
        kind = getattr(module, name, None) if module is not None else None
        if isinstance(kind, type) and issubclass(kind, BaseException):
            found.append(kind)
    return tuple(found)


def _refused(link: BaseException) -> bool:
    """The peer refused the connection: `ECONNREFUSED` on the error or the OS error it holds
    (aiohttp keeps it as `os_error`)."""
    if isinstance(link, ConnectionRefusedError):
        return True
    for error in (link, getattr(link, "os_error", None)):
        if isinstance(error, OSError) and error.errno == errno.ECONNREFUSED:
            return True
    return False


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
