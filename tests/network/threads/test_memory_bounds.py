"""`MemoryStore(max_threads=, max_bytes=)`: the least recently used threads are forgotten
beyond the bounds, never one a run holds the lease of; unbounded by default."""

from __future__ import annotations

import anyio
import pytest

from agents import Agent, ScriptedModel
from network import Network, ThreadRef, UserMessage
from network.errors import ConfigurationError
from network.threads import Commit, MemoryStore
from network.threads.store_leases import run_leases


async def add(store: MemoryStore, thread_id: str, text: str = "hi") -> None:
    info = await store.create_thread(thread_id, app_name="app")
    commit = Commit(revision=info.revision, messages=[UserMessage(content=text)])
    await store.append_results(thread_id, commit)


async def ids(store: MemoryStore) -> set[str]:
    return {info.thread_id for info in await store.list_threads()}


def test_the_least_recently_used_threads_beyond_max_threads_are_forgotten() -> None:
    async def scenario() -> None:
        store = MemoryStore(max_threads=3)
        for name in ("a", "b", "c"):
            await add(store, name)
        assert await store.get_thread("a") is not None  # used: now the most recent
        await add(store, "d")
        assert await ids(store) == {"a", "c", "d"}
        assert await store.get_thread("b") is None

    anyio.run(scenario)


def test_a_thread_a_run_holds_is_never_forgotten() -> None:
    async def scenario() -> None:
        store = MemoryStore(max_threads=2)
        leases = run_leases(store)
        assert leases is store.run_leases()  # the store's own: eviction sees them
        await add(store, "held")
        assert await leases.claim("held", "run-1", 30)
        for index in range(10):
            await add(store, f"t{index}")
        assert await ids(store) == {"held", "t9"}
        await leases.release("held", "run-1")
        await add(store, "t10")
        assert await ids(store) == {"t9", "t10"}

    anyio.run(scenario)


def test_the_bytes_of_the_threads_are_bounded_and_deleting_gives_them_back() -> None:
    async def scenario() -> None:
        store = MemoryStore(max_bytes=10_000)
        for index in range(10):
            await add(store, f"t{index}", "x" * 2_000)
            assert store.bytes <= 10_000
        kept = await ids(store)
        assert 2 <= len(kept) < 10 and "t9" in kept
        for thread_id in kept:
            assert await store.delete_thread(thread_id)
        assert store.bytes == 0

    anyio.run(scenario)


def test_a_rewind_keeps_the_thread_it_rewinds() -> None:
    network = Network("echo", agents=[Agent("echo", model=ScriptedModel(lambda r: "ok"))])

    async def scenario() -> None:
        store = MemoryStore(max_threads=3)
        for _ in range(2):  # two checkpoints
            await network.run("hi", thread=ThreadRef("t", store=store))
        await add(store, "other")
        await add(store, "third")
        await store.rewind_thread("t", to=0, kept_as="t-kept")
        assert await ids(store) == {"t", "t-kept", "third"}
        await store.fork_thread("t", at=0, new_thread_id="fork")
        assert await ids(store) == {"t", "t-kept", "fork"}

    anyio.run(scenario)


def test_by_default_nothing_is_forgotten_and_bad_bounds_are_refused() -> None:
    async def scenario() -> None:
        store = MemoryStore()
        for index in range(50):
            await add(store, f"t{index}")
        assert len(await ids(store)) == 50

    anyio.run(scenario)
    for bad in ({"max_threads": 0}, {"max_bytes": -1}, {"max_threads": 1.5}):
        with pytest.raises(ConfigurationError, match=next(iter(bad))):
            MemoryStore(**bad)  # type: ignore[arg-type]
