"""Deleting a thread or a user deletes the memories taken from them (ADK keeps them)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from network.errors import InvalidIdError
from network.memory import Memories, delete_thread, delete_user
from network.threads import MemoryStore

pytestmark = pytest.mark.anyio
ANN = ("app", "users", "ann")
BOB = ("app", "users", "bob")


async def test_deleting_a_thread_forgets_what_was_taken_from_it(
    make: Callable[..., Memories],
) -> None:
    memories = make()
    threads = MemoryStore()
    await threads.create_thread("t1", app_name="app", user_id="ann")
    await threads.create_thread("t2", app_name="app", user_id="ann")
    await memories.put(ANN, "tea", "Ann drinks tea", thread_id="t1", user_id="ann")
    await memories.put(ANN, "city", "Ann lives in Porto", thread_id="t2", user_id="ann")
    await memories.put(ANN, "own", "a note Ann wrote herself")

    deleted = await delete_thread(threads, memories, "t1")
    assert (deleted.threads, deleted.memories) == (1, 1)
    assert await threads.get_thread("t1") is None and await threads.get_thread("t2") is not None
    assert sorted(item.key for item in await memories.list(ANN)) == ["city", "own"]
    assert [item.key for item in await memories.search(ANN, "tea drink")] != ["tea"]
    assert "tea" not in {item.key for item in await memories.search(ANN, "tea", limit=10)}


async def test_deleting_a_user_forgets_their_threads_and_memories(
    make: Callable[..., Memories],
) -> None:
    memories = make()
    threads = MemoryStore()
    for thread, user in (("t1", "ann"), ("t2", "ann"), ("t3", "bob")):
        await threads.create_thread(thread, app_name="app", user_id=user)
    await memories.put(ANN, "tea", "Ann drinks tea", thread_id="t1", user_id="ann")
    await memories.put(ANN, "own", "a note Ann wrote herself")
    await memories.put(("app", "facts"), "ann-said", "the shop opens at 9", user_id="ann")
    await memories.put(BOB, "tea", "Bob drinks coffee", thread_id="t3", user_id="bob")

    deleted = await delete_user(threads, memories, "ann", app_name="app", namespaces=(ANN,))
    assert (deleted.threads, deleted.memories) == (2, 3)
    assert [info.thread_id for info in await threads.list_threads()] == ["t3"]
    assert await memories.namespaces() == [BOB]


async def test_a_bad_id_deletes_nothing(make: Callable[..., Memories]) -> None:
    memories = make()
    threads = MemoryStore()
    await memories.put(ANN, "tea", "Ann drinks tea", thread_id="t1")
    with pytest.raises(InvalidIdError):
        await delete_thread(threads, memories, "")
    with pytest.raises(InvalidIdError):
        await delete_user(threads, memories, "a\x00")
    assert [item.key for item in await memories.list(ANN)] == ["tea"]
