"""How the SQL store's methods fail: a database error leaves as a generic `ThreadStoreError`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from sqlalchemy.exc import SQLAlchemyError

from network.errors import AgentNetworkError, ThreadStoreError
from network.logger import LazyLogger

log = LazyLogger("agent_network.threads")  # silent unless the application turns logs on
P = ParamSpec("P")
R = TypeVar("R")


def database_errors(
    method: Callable[P, Coroutine[Any, Any, R]],
) -> Callable[P, Coroutine[Any, Any, R]]:
    """A database failure leaves as `ThreadStoreError` with a generic message.

    A driver's own text quotes SQL and the values bound to it, so it is logged here and kept
    as the `__cause__`, never put in a message a client or caller may show. The library's
    own errors (a stale revision, a missing thread) pass through unchanged.
    """
    operation = method.__name__.lstrip("_")  # a store's hook is named for its public method

    @functools.wraps(method)
    async def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except AgentNetworkError:
            raise
        except (SQLAlchemyError, UnicodeError, OSError) as exc:
            dialect = getattr(args[0], "dialect", "sql")
            log.error("thread_store.failed", operation=operation, dialect=dialect, error=repr(exc))
            raise ThreadStoreError(
                f"the thread store ({dialect}) failed in {operation}; the database error is logged",
                operation=operation,
            ) from exc

    return guarded
