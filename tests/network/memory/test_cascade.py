"""Deleting a thread or a user deletes the memories taken from them (ADK keeps them)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from network.errors import ConfigurationError, InvalidIdError, InvalidMemoryError
from network.memory import Memories, delete_thread, delete_user
from network.state.handlers import replace_values
from network.state.schema import build_spec
from network.threads import Commit, MemoryStore, SharedWrite, SQLStore, ThreadStore

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
    assert (deleted.threads, deleted.memories, deleted.user_keys) == (2, 3, 0)
    assert [info.thread_id for info in await threads.list_threads()] == ["t3"]
    assert await memories.namespaces() == [BOB]


async def test_a_bad_id_deletes_nothing(make: Callable[..., Memories]) -> None:
    memories = make()
    threads = MemoryStore()
    await memories.put(ANN, "tea", "Ann drinks tea", thread_id="t1", user_id="ann")
    with pytest.raises(InvalidIdError):
        await delete_thread(threads, memories, "")
    with pytest.raises(InvalidIdError):
        await delete_user(threads, memories, "a\x00")
    with pytest.raises(InvalidIdError):  # was refused by the thread store, after forgetting
        await delete_user(threads, memories, "ann", app_name="")
    assert [item.key for item in await memories.list(ANN)] == ["tea"]


@pytest.mark.parametrize("namespaces", [ANN, (ANN, ("app", "")), "app", {ANN}])
async def test_bad_namespaces_delete_nothing(
    make: Callable[..., Memories], namespaces: Any
) -> None:
    # A flat namespace (three labels, not a tuple of namespaces) was refused after the user's
    # memories had been forgotten.
    memories = make()
    threads = MemoryStore()
    await threads.create_thread("t1", app_name="app", user_id="ann")
    await memories.put(ANN, "tea", "Ann drinks tea", thread_id="t1", user_id="ann")
    with pytest.raises(InvalidMemoryError) as refused:
        await delete_user(threads, memories, "ann", namespaces=namespaces)
    assert refused.value.field.startswith("namespace")
    assert [item.key for item in await memories.list(ANN)] == ["tea"]
    assert await threads.get_thread("t1") is not None


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def thread_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ThreadStore]:
    """A thread store of each backend (its own tables on the shared PostgreSQL server)."""
    if request.param == "memory":
        yield MemoryStore()
        return
    if request.param == "sqlite":
        store = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}")
    else:
        url = request.getfixturevalue("postgres_url")
        store = SQLStore(url, table_prefix=f"cascade_{tmp_path.name.replace('-', '_')}_")
    try:
        yield store
    finally:
        await store.close()


def _user_key(key: str, value: Any) -> SharedWrite:
    return SharedWrite(key, value, replace_values, build_spec(key, Any, None))


async def test_deleting_a_user_deletes_their_user_state_on_every_store(
    thread_store: ThreadStore,
) -> None:
    """A thread's `user:` keys (what the app took from the user: their name, their
    preferences) go with the user, in the app named (another app's and user's stay)."""
    memories = Memories("memory://")
    for thread, app, user in (("t1", "app", "ann"), ("t2", "other", "ann"), ("t3", "app", "bob")):
        await thread_store.create_thread(thread, app_name=app, user_id=user)
        writes = [_user_key("user:name", user), _user_key("user:diet", "vegan")]
        await thread_store.append_results(thread, Commit(revision=0, shared=writes))
    await memories.put(ANN, "diet", "Ann is vegan", thread_id="t1", user_id="ann")

    deleted = await delete_user(thread_store, memories, "ann", app_name="app")
    assert (deleted.threads, deleted.memories, deleted.user_keys) == (1, 1, 2)
    # a new thread of Ann's in the app starts without what was taken from her before
    await thread_store.create_thread("t4", app_name="app", user_id="ann")
    fresh = await thread_store.get_thread("t4")
    assert fresh is not None and fresh.user_state == {}
    other_app, bob = await thread_store.get_thread("t2"), await thread_store.get_thread("t3")
    assert other_app is not None and other_app.user_state == {
        "user:name": "ann",
        "user:diet": "vegan",
    }
    assert bob is not None and bob.user_state == {"user:name": "bob", "user:diet": "vegan"}

    deleted = await delete_user(thread_store, memories, "ann")  # every app
    assert (deleted.threads, deleted.user_keys) == (2, 2)
    assert await thread_store.list_threads(user_id="ann") == []
    await memories.close()


async def test_a_store_that_cannot_delete_user_state_deletes_nothing() -> None:
    """A thread store written against `ThreadStore` alone is refused before anything goes."""

    class OwnStore:  # a ThreadStore by its shape, without delete_user_state
        def __init__(self) -> None:
            self.inner = MemoryStore()

        def __getattr__(self, name: str) -> Any:
            if name == "delete_user_state":
                raise AttributeError(name)
            return getattr(self.inner, name)

    memories = Memories("memory://")
    threads = OwnStore()
    await threads.create_thread("t1", app_name="app", user_id="ann")
    await memories.put(ANN, "tea", "Ann drinks tea", thread_id="t1", user_id="ann")
    with pytest.raises(ConfigurationError, match="OwnStore cannot delete a user's user: state"):
        await delete_user(threads, memories, "ann")  # type: ignore[arg-type]
    assert [item.key for item in await memories.list(ANN)] == ["tea"]
    assert [info.thread_id for info in await threads.list_threads()] == ["t1"]
    await memories.close()
