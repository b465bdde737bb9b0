"""The SQL store's own connections (`network.threads.sql_links`): SQLite transactions run whole
on a connection's own thread, at most `size` connections, a cancelled caller never cuts a
transaction short, a driver's error replaces the connection; PostgreSQL statements likewise."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy.exc import DBAPIError

from network.errors import StaleThreadError
from network.threads.sql_links import PostgresLink, SQLiteLink, _Pool, postgres_arguments

pytestmark = pytest.mark.anyio


def sqlite_link(tmp_path: Path, size: int = 5) -> SQLiteLink:
    return SQLiteLink(
        ((str(tmp_path / "links.db"),), {}), synchronous="FULL", busy_timeout=5.0, size=size
    )


def table(connection: sqlite3.Connection) -> None:
    connection.execute("CREATE TABLE IF NOT EXISTS notes (text TEXT)")


@pytest.mark.deadline
async def test_a_transaction_runs_whole_on_a_thread_of_its_own(tmp_path: Path) -> None:
    link = sqlite_link(tmp_path)
    ticks: list[float] = []

    def slow(connection: sqlite3.Connection) -> tuple[int, str]:
        table(connection)
        time.sleep(0.3)  # a busy wait for the write lock, an fsync: never on the event loop
        mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
        return threading.get_ident(), mode

    async def tick() -> None:
        for _ in range(5):
            ticks.append(time.monotonic())
            await anyio.sleep(0.02)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(tick)
            ident, mode = await link.run(slow)
        assert ident != threading.get_ident() and mode == "wal"
        assert len(ticks) == 5 and ticks[-1] - ticks[0] < 0.25  # the loop went on meanwhile
    finally:
        await link.close()


async def test_at_most_size_connections_each_reused(tmp_path: Path) -> None:
    link = sqlite_link(tmp_path, size=2)
    busy, most, seen = [0], [0], set()

    def work(connection: sqlite3.Connection) -> None:
        busy[0] += 1
        most[0] = max(most[0], busy[0])
        seen.add(threading.get_ident())
        time.sleep(0.05)
        busy[0] -= 1

    try:
        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(link.run, work)
        assert most[0] == 2 and len(seen) == 2
    finally:
        await link.close()


async def test_a_cancelled_caller_never_cuts_a_transaction_short(tmp_path: Path) -> None:
    link = sqlite_link(tmp_path)

    def commit(connection: sqlite3.Connection) -> None:
        table(connection)
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT INTO notes VALUES ('kept')")
        time.sleep(0.2)
        connection.execute("COMMIT")

    def count(connection: sqlite3.Connection) -> int:
        rows: int = connection.execute("SELECT count(*) FROM notes").fetchone()[0]
        return rows

    try:
        with anyio.move_on_after(0.05) as scope:
            await link.run(commit)
        assert scope.cancelled_caught
        assert await link.run(count) == 1  # it ran to its end, and the connection serves on
    finally:
        await link.close()


async def test_a_drivers_error_leaves_as_dbapi_error_and_the_connection_is_replaced(
    tmp_path: Path,
) -> None:
    link = sqlite_link(tmp_path, size=1)

    def marked(connection: sqlite3.Connection) -> bool:
        """Whether this connection was seen before (a temporary table is its own)."""
        seen = connection.execute("SELECT 1 FROM sqlite_temp_master WHERE name = 'seen'")
        if seen.fetchone():
            return True
        connection.execute("CREATE TEMP TABLE seen (x)")
        return False

    def broken(connection: sqlite3.Connection) -> None:
        connection.execute("SELECT * FROM no_such_table")

    def refused(connection: sqlite3.Connection) -> None:
        raise StaleThreadError("stale", thread_id="t", expected=0, found=1)

    try:
        assert not await link.run(marked)
        with pytest.raises(StaleThreadError):  # the library's own: the connection is fine
            await link.run(refused)
        assert await link.run(marked)
        with pytest.raises(DBAPIError):
            await link.run(broken)
        assert not await link.run(marked)  # a new connection
    finally:
        await link.close()


async def test_listeners_see_every_statement(tmp_path: Path) -> None:
    link = sqlite_link(tmp_path)
    seen: list[str] = []
    link.listeners.append(seen.append)
    try:
        await link.run(table)
        await link.statement("INSERT INTO notes VALUES (?)", ("x",), durable=False)
        assert [sql for sql in seen if "notes" in sql] == [
            "CREATE TABLE IF NOT EXISTS notes (text TEXT)",
            "INSERT INTO notes VALUES ('x')",
        ]
    finally:
        await link.close()


async def test_a_connection_is_traced_only_while_anyone_listens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite expands every statement's text for a trace callback: a connection has one only
    while the link has listeners, also ones added or removed after it opened."""
    callbacks: list[object] = []
    setter = sqlite3.Connection.set_trace_callback

    class Watched(sqlite3.Connection):
        def set_trace_callback(self, callback: Any) -> None:
            callbacks.append(callback)
            setter(self, callback)

    connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: connect(*a, factory=Watched, **k))
    link = sqlite_link(tmp_path, size=1)
    seen: list[str] = []
    try:
        await link.run(table)
        assert callbacks == []  # nobody listens: no trace
        link.listeners.append(seen.append)
        await link.statement("INSERT INTO notes VALUES (?)", ("x",))
        assert seen == ["INSERT INTO notes VALUES ('x')"]
        link.listeners.remove(seen.append)
        await link.statement("INSERT INTO notes VALUES (?)", ("y",))
        assert len(seen) == 1 and callbacks[-1] is None
    finally:
        await link.close()


async def test_a_connection_handed_to_a_cancelled_waiter_goes_to_the_next() -> None:
    opened: list[int] = []

    async def open_one() -> int:
        opened.append(len(opened))
        return opened[-1]

    async def close_one(connection: int) -> None:
        return None

    pool: _Pool[int] = _Pool(open_one, close_one, 1)
    first = await pool.take()

    async def gives_up() -> None:
        with anyio.move_on_after(0.01):
            await pool.take()

    await gives_up()
    # one handed the connection, then cancelled before it wakes, passes it on to the next
    handed = asyncio.ensure_future(pool.take())
    after = asyncio.ensure_future(pool.take())
    await anyio.sleep(0.01)
    pool.give_back(first)
    handed.cancel()
    assert await after == first
    assert handed.cancelled() and opened == [0]  # the one connection, none opened


async def test_postgres_statements_and_a_replaced_connection(postgres_url: str) -> None:
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(postgres_url)
    link = PostgresLink(postgres_arguments(engine.dialect, engine.url, {}), size=2)
    seen: list[str] = []
    link.listeners.append(seen.append)
    try:
        (row,) = await link.fetch("SELECT pg_backend_pid(), $1::text", "hello")
        pid: Any = row[0]
        assert row[1] == "hello" and seen == ["SELECT pg_backend_pid(), $1::text"]
        with pytest.raises(DBAPIError):
            await link.fetch("SELECT * FROM no_such_table")
        ((again,),) = await link.fetch("SELECT pg_backend_pid()")
        assert again != pid  # the connection that failed was closed, not reused
    finally:
        await link.close()
        await engine.dispose()


async def test_the_sync_level_is_switched_only_when_it_changes(tmp_path: Path) -> None:
    """Unsynced transactions (leases, a served run's input) run at NORMAL, synced ones at the
    store's level, and the connection's PRAGMA is sent only when the level must change."""
    link = sqlite_link(tmp_path, size=1)
    seen: list[str] = []
    link.listeners.append(seen.append)

    def level(connection: sqlite3.Connection) -> int:
        found: int = connection.execute("PRAGMA synchronous").fetchone()[0]
        return found

    try:
        levels = [
            await link.run(level, durable=False),
            await link.run(level, durable=False),
            await link.run(level, durable=False),
            await link.run(level),
            await link.run(level),
            await link.run(level, durable=False),
        ]
        assert levels == [1, 1, 1, 2, 2, 1]  # NORMAL, FULL
        switches = [sql for sql in seen if sql.startswith("PRAGMA synchronous =")]
        assert switches == [
            "PRAGMA synchronous = NORMAL",
            "PRAGMA synchronous = FULL",
            "PRAGMA synchronous = NORMAL",
        ]
    finally:
        await link.close()


def writer_thread(connection: sqlite3.Connection) -> int:
    """Make the table; the thread the writer's connection runs on."""
    table(connection)
    return threading.get_ident()


def holding_until(release: threading.Event, holding: threading.Event) -> Any:
    """A write that inserts a row and holds its transaction open until `release` is set;
    `holding` is set once the writer's thread is inside it."""

    def held(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO notes VALUES ('held')")
        holding.set()
        release.wait(30)

    return held


async def inside(holding: threading.Event) -> None:
    """Back once the writer's thread runs the held write, however late the machine lets it
    take it (a fixed 50 ms was not always enough under load)."""
    assert await anyio.to_thread.run_sync(holding.wait, 10), "the held write never began"


async def queued(link: SQLiteLink, count: int) -> None:
    """Back once `count` calls were handed to the writer and not answered yet."""
    with anyio.fail_after(10):
        while link._writer is None or link._writer.waited_on < count:
            await anyio.sleep(0.001)


def reader(connection: sqlite3.Connection) -> tuple[int, int]:
    """The thread a read runs on, and the rows it sees."""
    count: int = connection.execute("SELECT count(*) FROM notes").fetchone()[0]
    return threading.get_ident(), count


async def test_a_read_goes_to_the_idle_writer_and_never_waits_for_a_busy_one(
    tmp_path: Path,
) -> None:
    """A read runs on the writer's connection while it has nothing to do (its page cache holds
    what it wrote; a pool connection's is dropped after every commit it did not make), and on
    a pool connection while the writer works, so a read never waits for a write."""
    link = sqlite_link(tmp_path)
    release, holding = threading.Event(), threading.Event()
    held = holding_until(release, holding)

    try:
        writer = await link.write(writer_thread)
        assert await link.read(reader) == (writer, 0)  # idle: the writer's own connection
        async with anyio.create_task_group() as group:
            group.start_soon(link.write, held)
            await inside(holding)
            with anyio.fail_after(10):  # not behind the held write (held for 30 s)
                ident, count = await link.read(reader)
            assert ident != writer and count == 0  # a pool connection; the write is not in
            release.set()
        assert await link.read(reader) == (writer, 1)
    finally:
        release.set()
        await link.close()


async def test_a_brief_read_waits_for_the_busy_writer_rather_than_a_pool_connection(
    tmp_path: Path,
) -> None:
    """A brief read (a thread the process holds) goes to the writer's connection even while it
    works: it runs once the group being committed is done, on the writer's thread, and sees
    that group's writes; a pool connection would have read every page again."""
    link = sqlite_link(tmp_path)
    release, holding = threading.Event(), threading.Event()
    held = holding_until(release, holding)

    read: list[tuple[int, int]] = []

    async def brief() -> None:
        read.append(await link.read(reader, brief=True))

    try:
        writer = await link.write(writer_thread)
        async with anyio.create_task_group() as group:
            group.start_soon(link.write, held)
            # on the writer's thread before the read is queued: a write taken late would find
            # the read queued beside it, and run it first (before its group begins)
            await inside(holding)
            group.start_soon(brief)
            await queued(link, 2)  # handed to the writer (a pool's read is not counted)
            assert read == []  # behind the held write, not on a pool connection
            release.set()
        assert read == [(writer, 1)]  # on the writer's thread, after the held write's commit
    finally:
        release.set()
        await link.close()
