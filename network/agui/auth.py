"""Who may run on which thread: the `authorize` hook and thread ownership.

    def authorize(request: starlette.requests.Request, thread_id: str) -> str | None:
        token = request.headers.get("authorization", "")
        user = users_by_token.get(token.removeprefix("Bearer "))
        if user is None:
            raise Unauthorized("a valid bearer token is needed")
        return user.id                      # the principal; None also means 401

    asgi = app(network, authorize=authorize)

The hook (sync or async) gets the Starlette request and the threadId the body names, before
anything else is looked at (None for a request that names no thread: the thread list). It
returns the caller's principal (a non-empty string: a user id), or raises `Unauthorized`
(401) / `Forbidden` (403) with a message for the client; returning None is a 401. Any other
exception from the hook is logged and answered with a generic 500.

A thread belongs to the principal whose request created it. Another principal's request on
that threadId gets 404 `thread_not_found`, the same answer as for any thread it cannot see:
knowing a thread id alone reads nothing. Without a hook every request is anonymous and
threads have no owner. On a thread store (`app(network, store=...)`) the principal is the
thread's `user_id`: its `user:` keys are shared with that user's other threads; anonymous
requests are all the one anonymous user `""`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from network.agui.errors import RequestError
from network.agui.registry import ThreadRecord
from network.logger import LazyLogger

Authorize = Callable[[Any, str | None], "str | Awaitable[str | None] | None"]

log = LazyLogger("agent_network.agui")


class Unauthorized(RequestError):
    """Raised by an `authorize` hook: the caller is not authenticated (401)."""

    def __init__(self, message: str = "authentication required") -> None:
        super().__init__(401, "unauthorized", message)


class Forbidden(RequestError):
    """Raised by an `authorize` hook: the caller may not run on this thread (403)."""

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
        log.exception("agui.authorize_failed", thread_id=thread_id)
        raise RequestError(500, "internal_error", "authorization failed") from None
    if principal is None:
        raise Unauthorized()
    if not isinstance(principal, str) or not principal:
        log.error("agui.authorize_bad_principal", principal_type=type(principal).__name__)
        raise RequestError(500, "internal_error", "authorization failed")
    return principal


def check_owner(record: ThreadRecord | None, principal: str | None) -> None:
    """A 404 when `record`'s thread belongs to someone else (as if it did not exist)."""
    if record is not None and record.owner != principal:
        raise RequestError(404, "thread_not_found", f"no thread {record.thread_id!r}")
