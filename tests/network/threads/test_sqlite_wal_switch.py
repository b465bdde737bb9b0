"""A new SQLite file switched to WAL by several connections at once (the flaky concurrency test).

SQLite answers "database is locked" at once, without waiting `busy_timeout`, to a connection
that holds a shared lock and asks for more while another connection holds the write lock: it
is a possible deadlock, so its busy handler is not called. Connections that each switch a new
file to WAL mode hit exactly that; the store retries the switch instead of failing the run.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

from agents import Agent, ScriptedModel
from network import Network, ThreadRef
from network.threads import SQLStore

pytestmark = pytest.mark.anyio


async def test_a_store_waits_out_another_connection_holding_a_new_file(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE other (x)")  # a new file, still in rollback-journal mode
    holder.execute("BEGIN IMMEDIATE")  # the write lock, as a connection mid-switch holds it
    released = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    released.start()
    try:
        async with SQLStore(str(path)) as store:
            with anyio.fail_after(20):
                await store.setup()  # failed with "database is locked" at once before
            assert await store.get_thread("t1") is None
    finally:
        released.join()
        holder.close()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    check.close()


async def test_six_stores_open_a_new_file_at_once(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    network = Network("chat", agents=[Agent("a", model=ScriptedModel(["ok"] * 6))])
    failures: list[BaseException] = []

    async def one(n: int) -> None:
        try:
            await network.run("hi", thread=ThreadRef(f"t{n}", store=url))
        except Exception as exc:  # collected: every run must succeed
            failures.append(exc)

    async with anyio.create_task_group() as group:
        for n in range(6):
            group.start_soon(one, n)
    assert failures == []
