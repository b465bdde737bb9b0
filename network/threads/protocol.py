"""The thread store protocol: what a run needs from wherever its threads are kept.

It follows AgentKit's history adapter (create a thread, get it, append the user's message,
append results) and Google ADK's session service (list, delete, scoped state, reading only
recent events). Three stores implement it: `MemoryStore`, and `SQLStore` for SQLite and
PostgreSQL. Your own store plugs in by implementing the same methods; subclass `BaseStore` to
get `append_user_message` and the async context manager for free.

Contract every implementation keeps (the conformance suite in tests/network/threads checks it):

- `get_thread` / `get_results` of a missing thread return None; `create_thread` of an existing
  id raises `ThreadExistsError`.
- `append_results(thread_id, commit)` applies the whole commit in one transaction, only if the
  thread is still at `commit.revision` (else `StaleThreadError`, nothing written), and returns
  the new revision (`commit.revision + 1`). A commit that fails for any reason writes nothing.
- Each `SharedWrite` is re-applied with `write.apply(stored_json)` to the value the store
  holds for the thread's user (`user:`) or app (`app:`), inside that transaction, with the
  row locked, so concurrent commits of different threads never lose each other's writes.
- `commit.summaries` (conversation summaries a context policy wrote) are kept with the thread
  and handed back, oldest first, in `Thread.summaries`.
- Committed messages, results and summaries never change, so a store may decode each once
  (lazily, when first read) and hand the same (read-only) objects to every reader, as
  `RecordLog`s over its own sequences; `get_thread` then costs what the thread gained since it
  was last read, not its length.
- Nothing of a `temp:` key is ever given to a store.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from network.errors import ThreadError
from network.history.messages import UserMessage, check_messages
from network.history.results import InferenceResult
from network.threads.thread_data import (
    ANONYMOUS_USER,
    Commit,
    Thread,
    ThreadInfo,
    new_thread_info,
)


class ThreadExistsError(ThreadError):
    """`create_thread` was given an id that is already taken."""


class ThreadNotFoundError(ThreadError):
    """A commit or read named a thread the store does not hold (never created, or deleted)."""


@runtime_checkable
class ThreadStore(Protocol):
    """Where threads live between runs. See the module docstring for the contract."""

    async def create_thread(
        self,
        thread_id: str,
        *,
        app_name: str,
        user_id: str = ANONYMOUS_USER,
        metadata: dict[str, Any] | None = None,
    ) -> ThreadInfo:
        """Create an empty thread at revision 0; `ThreadExistsError` when the id is taken.
        `metadata` is a mapping of names to plain JSON (`thread_data.check_metadata`: else a
        `ConfigurationError` naming the entry, and nothing is created)."""
        ...

    async def get_thread(self, thread_id: str) -> Thread | None:
        """The whole thread with its user's and app's state, or None."""
        ...

    async def list_threads(
        self, *, app_name: str | None = None, user_id: str | None = None
    ) -> list[ThreadInfo]:
        """Thread headers, most recently updated first, optionally of one app and/or user."""
        ...

    async def delete_thread(self, thread_id: str) -> bool:
        """Delete a thread, its conversation, results and thread keys; whether it existed.

        `user:` and `app:` state is left alone: other threads share it.
        """
        ...

    async def get_results(
        self, thread_id: str, *, last: int | None = None, after: float | None = None
    ) -> list[InferenceResult] | None:
        """The thread's agent calls, oldest first: only the `last` N, and/or only those that
        started after `after` (seconds since the epoch). None for a missing thread. A `last`
        that is no count (negative, a float, a bool) or an `after` that is no time (NaN, not
        a number) is a `ConfigurationError` naming it (`network.threads.decoded.check_window`)."""
        ...

    async def append_user_message(self, thread_id: str, content: Any, *, revision: int) -> int:
        """Append a user message (text or a `UserMessage`); returns the new revision."""
        ...

    async def append_results(self, thread_id: str, commit: Commit) -> int:
        """Apply `commit` atomically if the thread is at `commit.revision`; the new revision."""
        ...

    async def close(self) -> None:
        """Release connections. The store is unusable afterwards."""
        ...


@runtime_checkable
class UserStateStore(Protocol):
    """A thread store that can forget a user's `user:` state (`MemoryStore` and `SQLStore`
    do). A protocol of its own, beside `ThreadStore`, so a store written against
    `ThreadStore` alone stays one; `network.memory.delete_user` refuses such a store before
    deleting anything, naming it."""

    async def delete_user_state(self, user_id: str, *, app_name: str | None = None) -> int:
        """Delete every `user:` key of `user_id` (in `app_name`, or in every app); how many
        keys were deleted. Threads are left alone."""
        ...


class BaseStore:
    """Shared behaviour of the ready stores: `append_user_message`, `async with`, and
    `create_thread` over a store's `_create_thread`."""

    async def create_thread(
        self,
        thread_id: str,
        *,
        app_name: str,
        user_id: str = ANONYMOUS_USER,
        metadata: dict[str, Any] | None = None,
    ) -> ThreadInfo:
        """The new thread's header, its ids checked (`InvalidIdError` naming the field) before
        the store (`_create_thread`) keeps it or refuses a taken id."""
        info = new_thread_info(thread_id, app_name=app_name, user_id=user_id, metadata=metadata)
        await self._create_thread(info)
        return info

    async def _create_thread(self, info: ThreadInfo) -> None:
        """Keep a new thread's header, at revision 0; `ThreadExistsError` when its id is taken."""
        raise NotImplementedError

    async def append_results(self, thread_id: str, commit: Commit) -> int:
        raise NotImplementedError

    async def append_user_message(self, thread_id: str, content: Any, *, revision: int) -> int:
        """Append a user message (text or a `UserMessage`); returns the new revision."""
        message = content if isinstance(content, UserMessage) else UserMessage(content=content)
        messages = check_messages([message])  # a ValidationError names the bad field
        return await self.append_results(thread_id, Commit(revision=revision, messages=messages))

    async def close(self) -> None:
        """Nothing to release by default."""

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
