"""A run's commits on SQLite as one transaction on a connection's thread
(`network.threads.sql_fast_sqlite`): more rows than one statement may bind land whole and in
order, a commit that fails inside its transaction writes nothing, and claims, waiting calls and
append-only commits keep their rules."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable

import anyio
import pytest

from network import AssistantMessage, UserMessage
from network.errors import ThreadStoreError
from network.threads import Commit, PendingCall, SQLStore, ThreadStore
from network.threads.sql_fast_sqlite import SQLiteFast
from tests.network.threads.test_conformance import commit_exchange

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_kind", ["sqlite"])]


async def test_a_thousand_messages_land_whole_and_in_order(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    assert isinstance(store, SQLStore) and isinstance(store._fast, SQLiteFast)
    await store.create_thread("t", app_name="app")
    messages = [UserMessage(f"m{i}") if i % 2 else AssistantMessage(f"m{i}") for i in range(1000)]
    state = {f"k{i}": f'"{i}"' for i in range(400)}  # more keys than one upsert binds
    assert await store.append_results("t", Commit(revision=0, messages=messages, state=state)) == 1
    thread = await open_store().get_thread("t")  # another store: read from the database
    assert thread is not None
    assert [m.content for m in thread.messages] == [f"m{i}" for i in range(1000)]
    assert thread.state == {f"k{i}": str(i) for i in range(400)}


async def test_a_commit_failing_inside_its_transaction_writes_nothing(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    await store.create_thread("t", app_name="app")
    # the key's text cannot be encoded: its upsert fails after the bump and the inserts
    doomed = Commit(revision=0, messages=[UserMessage("lost")], state={"k": "\ud800"})
    with pytest.raises(ThreadStoreError):
        await store.append_results("t", doomed)
    thread = await open_store().get_thread("t")
    assert thread is not None and (thread.revision, len(thread.messages)) == (0, 0)
    assert await commit_exchange(store, "t", 0, "fine") == 1  # and the store goes on


async def test_waiting_calls_are_numbered_in_order_and_answered_once(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    await store.create_thread("t", app_name="app")
    first = PendingCall("c1", "client_tool", "r1", {"id": "c1", "name": "ask", "arguments": {}})
    second = PendingCall("c2", "client_tool", "r1", {"id": "c2", "name": "ask", "arguments": {}})
    revision = await store.append_results("t", Commit(revision=0, pending=[first]))
    revision = await store.append_results("t", Commit(revision=revision, pending=[second]))
    thread = await open_store().get_thread("t")
    assert thread is not None and [entry.id for entry in thread.pending] == ["c1", "c2"]
    answer = Commit(revision=revision, run_id="r2", answered={"c1": "{}", "c2": "{}"})
    assert await store.append_results("t", answer) == revision + 1
    thread = await store.get_thread("t")
    assert thread is not None and thread.pending == []


async def test_an_unsynced_commit_waits_for_no_disk_and_the_next_synced_one_does(
    open_store: Callable[[], ThreadStore],
) -> None:
    """`Commit(synced=False)` (a served run's input, kept before its first agent call) is
    committed with `synchronous=NORMAL` on its connection; the next commit, synced, switches
    the connection back to the store's level (FULL) first."""
    store = open_store()
    assert isinstance(store, SQLStore)
    await store.create_thread("t", app_name="app")
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    kept = Commit(revision=0, run_id="r1", messages=[UserMessage("hi")], synced=False)
    assert await store.append_results("t", kept) == 1
    assert seen[:2] == ["PRAGMA synchronous = NORMAL", "BEGIN IMMEDIATE"]
    assert seen[-1] == "COMMIT"
    seen.clear()
    assert await commit_exchange(store, "t", 1, "answer") == 2
    assert seen[:2] == ["PRAGMA synchronous = FULL", "BEGIN IMMEDIATE"]  # synced as the store is
    assert [sql for sql in seen if sql.startswith("PRAGMA")] == ["PRAGMA synchronous = FULL"]
    thread = await open_store().get_thread("t")
    assert thread is not None and thread.messages[0].content == "hi"


async def test_concurrent_runs_commits_share_transactions(
    open_store: Callable[[], ThreadStore],
) -> None:
    """Eight runs committing at once on eight threads: their commits queue on the store's
    writer and are committed together (fewer COMMITs, so fewer fsyncs, than commits), each
    once, each thread at its next revision."""
    store = open_store()
    assert isinstance(store, SQLStore)
    for index in range(8):
        await store.create_thread(f"t{index}", app_name="app")
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    async with anyio.create_task_group() as group:
        for index in range(8):
            group.start_soon(commit_exchange, store, f"t{index}", 0, f"answer {index}")
    assert 1 <= seen.count("COMMIT") < 8 and seen.count("BEGIN IMMEDIATE") == seen.count("COMMIT")
    for index in range(8):
        thread = await open_store().get_thread(f"t{index}")
        assert thread is not None and thread.revision == 1
        assert [m.content for m in thread.messages][-1] == f"answer {index}"


async def test_a_thread_the_store_holds_is_read_again_on_the_busy_writer(
    open_store: Callable[[], ThreadStore],
) -> None:
    """Reading again a thread the store holds (its row, its keys, what was committed since)
    waits for the writer's connection, whose page cache holds what it wrote, while it commits:
    no pool connection reads every page from the file again. A thread the store does not hold
    is read on a pool connection meanwhile."""
    store = open_store()
    assert isinstance(store, SQLStore)
    await store.create_thread("t", app_name="app")
    await store.create_thread("cold", app_name="app")
    assert await store.get_thread("t") is not None  # the store holds it from now on
    assert await commit_exchange(store, "t", 0, "one") == 1
    store.decoded.forget("cold")  # not held: read whole
    release, holding = threading.Event(), threading.Event()
    link = store._sqlite()

    def held(connection: sqlite3.Connection) -> None:
        connection.execute("SELECT 1")
        holding.set()
        release.wait(30)

    read: list[object] = []

    async def again() -> None:
        read.append(await store.get_thread("t"))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(link.write, held)
            # on the writer's thread before the read is queued (however late the machine lets
            # it take it): a write taken late would find the read queued beside it, and run
            # it first, before its group begins
            assert await anyio.to_thread.run_sync(holding.wait, 10), "never held"
            group.start_soon(again)
            with anyio.fail_after(10):  # not held: a pool connection's
                cold = await store.get_thread("cold")
            with anyio.fail_after(10):  # "t" handed to the writer (a pool's read is not)
                while link._writer is None or link._writer.waited_on < 2:
                    await anyio.sleep(0.001)
            assert cold is not None and read == []  # "t" waits behind the held write
            release.set()
    finally:
        release.set()
    (thread,) = read
    assert isinstance(thread, type(cold)) and thread.revision == 1
