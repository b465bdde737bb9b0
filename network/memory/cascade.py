"""Deleting a thread, or a user, with what memory took from them.

ADK's memory service keeps what it took from a session after the session is deleted. Here
every memory the library extracts records the thread and the user it came from, and these
two functions delete both sides: the memories first (what the user asked to be forgotten is
gone even if the thread's deletion then fails), then the thread store's part.
"""

from __future__ import annotations

from dataclasses import dataclass

from network.memory.items import Namespace
from network.memory.memories import Memories
from network.threads.ids import check_id
from network.threads.protocol import ThreadStore

__all__ = ["Deleted", "delete_thread", "delete_user"]


@dataclass(frozen=True, slots=True)
class Deleted:
    """What a deletion removed: `threads` deleted, `memories` forgotten."""

    threads: int
    memories: int


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
    """Delete a user's threads (of `app_name`, or of every app), every memory taken from the
    user, and the `namespaces` given (the user's own: `("shop", "users", "ann")`)."""
    check_id("user_id", user_id)
    forgotten = await memories.forget(user_id=user_id)
    for namespace in namespaces:
        forgotten += await memories.forget(namespace=namespace)
    deleted = 0
    for info in await threads.list_threads(app_name=app_name, user_id=user_id):
        deleted += int(await threads.delete_thread(info.thread_id))
    return Deleted(threads=deleted, memories=forgotten)
