"""Runs from the page as a user: the `x-agent-network-user` header picks the run's principal.

The dev UI is a developer's tool on their own machine: the page may act as any user, to see
what `user:` keys one user's threads share (on a thread store the AG-UI principal is the
thread's `user_id`). A request carrying the header goes to an AG-UI server whose `authorize`
returns the header's value (the UTF-8 bytes of the user's name: a header carries bytes, and a
browser sends no character above U+00FF; checked by the thread stores' id rules: a bad one is
a 422 naming the header); a request without it to the anonymous one, as before. Both share one
thread registry, so a thread keeps belonging to the user who started it: another user's
request on it, or an anonymous one, is the AG-UI server's 404 `thread_not_found`.

A custom header also means a browser never sends it cross-site without a CORS preflight,
which this server does not answer.
"""

from __future__ import annotations

from typing import Any

from network.errors import InvalidIdError
from network.serving.errors import RequestError
from network.threads.ids import check_id

USER_HEADER = "x-agent-network-user"
_HEADER_BYTES = USER_HEADER.encode()


def user_from_header(request: Any, thread_id: str | None) -> str:
    """The AG-UI `authorize` hook: the user the page asked to run as."""
    value = _utf8(request.headers.get(USER_HEADER, ""))
    try:
        return check_id(USER_HEADER, value)
    except InvalidIdError as exc:
        raise RequestError(422, "invalid_user", str(exc), key=USER_HEADER) from exc


def _utf8(value: str) -> str:
    """The header's value read as the UTF-8 bytes the page sends (a header is bytes, which
    Starlette hands over one character each, as Latin-1); a value that is not UTF-8 (a client
    that sent a Latin-1 name, `Jos\\xe9`) stays as it was read."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


class ByActingUser:
    """An ASGI app sending requests with the header to `as_user`, the others to `anonymous`."""

    def __init__(self, anonymous: Any, as_user: Any) -> None:
        self.anonymous, self.as_user = anonymous, as_user

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = scope.get("headers") or []
        acting = any(name == _HEADER_BYTES for name, _ in headers)
        target = self.as_user if acting else self.anonymous
        await target(scope, receive, send)
