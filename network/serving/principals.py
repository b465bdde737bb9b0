"""Principals: who a request acts for, decided by the application's `authorize` hook.

    def authorize(request, thread_id: str | None) -> str | None:
        token = request.headers.get("authorization", "")
        user = users_by_token.get(token.removeprefix("Bearer "))
        if user is None:
            raise Unauthorized("a valid bearer token is needed")
        return user.id                      # the principal; None also means 401

The hook (sync or async) gets the protocol's request object (a Starlette `Request` for the
AG-UI and A2A servers; the HTTP request under an MCP call over Streamable HTTP, None over
stdio) and the thread the request names, before anything else is looked at (None for a
request that names no thread: a thread list, and every Streamable HTTP request to the MCP
server before the SDK reads it, `network.mcp.authorized`). It returns the caller's principal (a
non-empty string: a user id), or raises `Unauthorized` (401) / `Forbidden` (403) with a
message for the client; returning None is a 401. Any other exception from the hook is logged
and answered with a generic 500, its text never sent.

A thread belongs to the principal whose request created it: another principal's request on
it is answered as if the thread did not exist (`check_owner`, 404 `thread_not_found`), so
knowing a thread id alone reads nothing. Without a hook every request is anonymous. On a
thread store the principal is the thread's `user_id` (`store_user`): its `user:` keys are
shared with that user's other threads; anonymous requests are all the one anonymous user `""`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from network.errors import InvalidIdError
from network.logger import LazyLogger
from network.serving.errors import RequestError
from network.serving.registry import ThreadRecord
from network.threads.ids import check_id
from network.threads.thread_data import ANONYMOUS_USER

Authorize = Callable[[Any, str | None], "str | Awaitable[str | None] | None"]

log = LazyLogger("agent_network.serving")


class Unauthorized(RequestError):
    """Raised by an `authorize` hook: the caller is not authenticated (401)."""

    def __init__(self, message: str = "authentication required") -> None:
        super().__init__(401, "unauthorized", message)


class Forbidden(RequestError):
    """Raised by an `authorize` hook: the caller may not act on this thread (403)."""

    def __init__(self, message: str = "not allowed") -> None:
        super().__init__(403, "forbidden", message)


async def principal_of(hook: Authorize | None, request: Any, thread_id: str | None) -> str | None:
    """The principal `hook` grants for `thread_id` (None without a hook), or a `RequestError`."""
    if hook is None:
        return None
    try:
        principal = hook(request, thread_id)
        if inspect.isawaitable(principal):
            principal = await principal
    except RequestError:
        raise
    except Exception:
        log.exception("serving.authorize_failed", thread_id=thread_id)
        raise RequestError(500, "internal_error", "authorization failed") from None
    if principal is None:
        raise Unauthorized()
    if not isinstance(principal, str) or not principal:
        log.error("serving.authorize_bad_principal", principal_type=type(principal).__name__)
        raise RequestError(500, "internal_error", "authorization failed")
    return principal


def not_found(thread_id: str) -> RequestError:
    """The answer for a thread the caller cannot see: the same whether it exists or not."""
    return RequestError(404, "thread_not_found", f"no thread {thread_id!r}")


def check_owner(record: ThreadRecord | None, principal: str | None) -> None:
    """A 404 when `record`'s thread belongs to someone else (as if it did not exist)."""
    if record is not None and record.owner != principal:
        raise not_found(record.thread_id)


def store_user(principal: str | None) -> str:
    """The thread store's user id for `principal` (the anonymous user `""` for None).

    A principal no store can keep is the application's hook's fault, not the client's: a
    generic 500, logged (its length only: it may be a secret)."""
    user = principal if principal is not None else ANONYMOUS_USER
    try:
        return check_id("user_id", user, allow_empty=True)
    except InvalidIdError:
        log.error("serving.unstorable_principal", length=len(user))
        raise RequestError(500, "internal_error", "authorization failed") from None
