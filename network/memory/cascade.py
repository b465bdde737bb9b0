"""Deleting a thread, or a user, with what memory took from them.

ADK's memory service keeps what it took from a session after the session is deleted. Here
every memory the library extracts records the thread and the user it came from, and these
two functions delete both sides: the memories first (what the user asked to be forgotten is
gone even if the thread's deletion then fails), then the thread store's part. A user's part
of the thread store is their threads and then their `user:` state (after the threads, so no
commit of theirs writes it again); a store that cannot delete `user:` state
(`network.threads.UserStateStore`) is refused before anything is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass

from network.errors import ConfigurationError, InvalidMemoryError
from network.memory._checks import check_namespace
from network.memory.items import Namespace
from network.memory.memories import Memories
from network.threads.ids import check_id
from network.threads.protocol import ThreadStore, UserStateStore

__all__ = ["Deleted", "delete_thread", "delete_user"]


@dataclass(frozen=True, slots=True)
class Deleted:
    """What a deletion removed: `threads` deleted, `memories` forgotten, `user_keys` (the
    user's `user:` state keys) deleted."""

    threads: int
    memories: int
    user_keys: int = 0


async def delete_thread(threads: ThreadStore, memories: Memories, thread_id: str) -> Deleted:
    """Delete thread `thread_id` and every memory taken from it."""
    check_id("thread_id", thread_id)
    forgotten = await memories.forget(thread_id=thread_id)
    existed = await threads.delete_thread(thread_id)
    return Deleted(threads=int(existed), memories=forgotten)


async def delete_user(
    threads: ThreadStore,
    memories: Memories,
    user_id: str,
    *,
    app_name: str | None = None,
    namespaces: tuple[Namespace, ...] = (),
) -> Deleted:
    """Delete a user's threads and `user:` state (of `app_name`, or of every app), every
    memory taken from the user, and the `namespaces` given (the user's own:
    `("shop", "users", "ann")`). A thread store that cannot delete `user:` state (it does
    not implement `network.threads.UserStateStore`) is a `ConfigurationError`, raised before
    anything is deleted."""
    check_id("user_id", user_id)
    if app_name is not None:
        check_id("app_name", app_name)  # the thread store's rule, met after the forgetting
    namespaces = () if namespaces is None else namespaces
    if isinstance(namespaces, str) or not isinstance(namespaces, tuple | list):
        raise InvalidMemoryError(
            f"delete_user: namespaces must be a tuple of namespaces, got {namespaces!r:.100}",
            field="namespaces",
        )
    # Each checked before anything is deleted: a flat ("shop", "users", "ann") is three
    # labels, not one namespace, and was refused after the user's memories were forgotten.
    namespaces = tuple(check_namespace(namespace) for namespace in namespaces)
    if not isinstance(threads, UserStateStore):
        raise ConfigurationError(
            f"delete_user: the thread store {type(threads).__name__} cannot delete a user's "
            "user: state; it must implement network.threads.UserStateStore "
            "(delete_user_state; MemoryStore and SQLStore do). Nothing was deleted"
        )
    forgotten = await memories.forget(user_id=user_id)
    for namespace in namespaces:
        forgotten += await memories.forget(namespace=namespace)
    deleted = 0
    for info in await threads.list_threads(app_name=app_name, user_id=user_id):
        deleted += int(await threads.delete_thread(info.thread_id))
    keys = await threads.delete_user_state(user_id, app_name=app_name)
    return Deleted(threads=deleted, memories=forgotten, user_keys=keys)
