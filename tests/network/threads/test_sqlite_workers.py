"""The SQLite store's writer (`network.threads.sqlite_workers`): writes queued while it commits
are committed together (one transaction, one COMMIT), each caller answered only once that
COMMIT is done; a write the library refuses is undone alone, a driver's error costs the others
nothing; the group is synced when any of its writes asks for it; a group waits briefly for the
writers the last one answered, never for a writer alone."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup
from sqlalchemy.exc import DBAPIError

from network.errors import StaleThreadError
from network.threads import sqlite_workers
from network.threads.sql_links import SQLiteLink

pytestmark = pytest.mark.anyio


def sqlite_link(tmp_path: Path) -> SQLiteLink:
    return SQLiteLink(
        ((str(tmp_path / "writer.db"),), {}), synchronous="FULL", busy_timeout=5.0, size=2
    )


def rows(path: Path) -> list[str]:
    """The notes another connection sees (what is committed)."""
    with sqlite3.connect(path / "writer.db") as other:
        return sorted(text for (text,) in other.execute("SELECT text FROM notes"))


async def the_writer_held(link: SQLiteLink, group: TaskGroup, release: threading.Event) -> None:
    """A write started that holds the writer until `release` (what is queued meanwhile goes
    together); back once the writer's thread is inside it, however slowly the machine runs."""
    holding = threading.Event()

    def held(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO notes VALUES ('first')")
        holding.set()
        release.wait(5)

    group.start_soon(link.write, held)
    assert await anyio.to_thread.run_sync(holding.wait, 5), "the held write never began"


async def all_queued(link: SQLiteLink, count: int) -> None:
    """Back once `count` calls wait behind the held write (each is counted as it is queued)."""
    with anyio.fail_after(5):
        while link._writer is None or link._writer.waited_on < 1 + count:
            await anyio.sleep(0.001)


async def two_rounds(
    link: SQLiteLink,
    writer: Callable[[int], Coroutine[Any, Any, None]],
    reader: Callable[[], Coroutine[Any, Any, None]] | None = None,
) -> list[str]:
    """The notes table made; then, behind a held write, four `writer`s (each writes twice:
    two rounds of group commits) and the `reader` if any, the write released once all are queued.
    The statements the link ran after the table was made."""
    seen: list[str] = []
    release = threading.Event()
    await link.write(lambda c: c.execute("CREATE TABLE notes (text TEXT)"))
    link.listeners.append(seen.append)
    async with anyio.create_task_group() as group:
        await the_writer_held(link, group, release)
        for index in range(4):
            group.start_soon(writer, index)
        if reader is not None:
            group.start_soon(reader)
        await all_queued(link, 4 if reader is None else 5)
        release.set()
    return seen


async def queued_behind(link: SQLiteLink, writes: list[object]) -> list[object]:
    """`writes` (bodies) queued behind a held one; each one's outcome, the held one's first."""
    release = threading.Event()
    outcomes: list[object] = [None] * len(writes)

    async def one(index: int, body: object) -> None:
        try:
            outcomes[index] = await link.write(body)  # type: ignore[arg-type]
        except Exception as exc:
            outcomes[index] = exc

    async with anyio.create_task_group() as group:
        await the_writer_held(link, group, release)
        for index, body in enumerate(writes):
            group.start_soon(one, index, body)
        await all_queued(link, len(writes))
        release.set()
    return outcomes


def note(text: str) -> object:
    def body(connection: sqlite3.Connection) -> str:
        connection.execute("INSERT INTO notes VALUES (?)", (text,))
        return text

    return body


async def test_writes_queued_while_one_commits_are_committed_together(tmp_path: Path) -> None:
    link = sqlite_link(tmp_path)
    seen: list[str] = []
    try:
        await link.write(lambda c: c.execute("CREATE TABLE notes (text TEXT)"))
        link.listeners.append(seen.append)
        outcomes = await queued_behind(link, [note(f"n{i}") for i in range(6)])
        assert outcomes == [f"n{i}" for i in range(6)]
        assert rows(tmp_path) == ["first", *(f"n{i}" for i in range(6))]
        # the held write alone, then the six in one transaction: two COMMITs, two fsyncs
        assert seen.count("COMMIT") == 2 and seen.count("BEGIN IMMEDIATE") == 2
        assert seen.count("SAVEPOINT one_write") == 6
    finally:
        await link.close()


async def test_each_caller_is_answered_once_its_commit_is_visible(tmp_path: Path) -> None:
    link = sqlite_link(tmp_path)
    answered: list[list[str]] = []
    try:
        await link.write(lambda c: c.execute("CREATE TABLE notes (text TEXT)"))
        release = threading.Event()

        async def one(text: str) -> None:
            await link.write(note(text))  # type: ignore[arg-type]
            answered.append([text, *rows(tmp_path)])  # another connection sees it already

        async with anyio.create_task_group() as group:
            await the_writer_held(link, group, release)
            for text in ("a", "b", "c"):
                group.start_soon(one, text)
            await all_queued(link, 3)
            release.set()
        assert len(answered) == 3 and all(text in seen for text, *seen in answered)
    finally:
        await link.close()


async def test_a_refused_write_is_undone_alone(tmp_path: Path) -> None:
    link = sqlite_link(tmp_path)

    def refused(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO notes VALUES ('undone')")  # written, then refused
        raise StaleThreadError("stale", thread_id="t", expected=0, found=1)

    try:
        await link.write(lambda c: c.execute("CREATE TABLE notes (text TEXT)"))
        outcomes = await queued_behind(link, [note("a"), refused, note("b")])
        assert outcomes[0] == "a" and outcomes[2] == "b"
        assert isinstance(outcomes[1], StaleThreadError)
        assert rows(tmp_path) == ["a", "b", "first"]
    finally:
        await link.close()


async def test_a_drivers_error_costs_the_others_nothing(tmp_path: Path) -> None:
    """The group is rolled back and each write runs alone: the broken one fails with
    `DBAPIError`, the others commit once each, and the writer goes on on a new connection."""
    link = sqlite_link(tmp_path)

    def broken(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO notes VALUES ('lost')")
        connection.execute("SELECT * FROM no_such_table")

    try:
        await link.write(lambda c: c.execute("CREATE TABLE notes (text TEXT)"))
        outcomes = await queued_behind(link, [note("a"), broken, note("b")])
        assert outcomes[0] == "a" and outcomes[2] == "b"
        assert isinstance(outcomes[1], DBAPIError)
        assert rows(tmp_path) == ["a", "b", "first"]  # each once, nothing of the broken one
        assert await link.write(note("after")) == "after"  # type: ignore[arg-type]
    finally:
        await link.close()


async def test_a_group_holding_a_durable_write_is_synced(tmp_path: Path) -> None:
    """Unsynced writes (a lease) alone run at NORMAL; committed with a synced one, the whole
    group is synced at the store's level (FULL)."""
    link = sqlite_link(tmp_path)
    seen: list[str] = []
    release = threading.Event()
    try:
        await link.write(lambda c: c.execute("CREATE TABLE notes (text TEXT)"))
        await link.statement("INSERT INTO notes VALUES ('lease')", (), durable=False)
        link.listeners.append(seen.append)
        async with anyio.create_task_group() as group:
            await the_writer_held(link, group, release)  # durable: switches to FULL
            group.start_soon(
                lambda: link.statement("INSERT INTO notes VALUES ('x')", (), durable=False)
            )
            group.start_soon(lambda: link.write(note("kept")))  # type: ignore[arg-type]
            await all_queued(link, 2)
            release.set()
        begins = [i for i, sql in enumerate(seen) if sql == "BEGIN IMMEDIATE"]
        assert len(begins) == 2 and seen[begins[0] - 1] == "PRAGMA synchronous = FULL"
        assert [sql for sql in seen if sql.startswith("PRAGMA")] == ["PRAGMA synchronous = FULL"]
        level = await link.write(lambda c: c.execute("PRAGMA synchronous").fetchone()[0])
        assert level == 2  # FULL
    finally:
        await link.close()


async def test_a_cancelled_caller_never_cuts_its_write_short(tmp_path: Path) -> None:
    link = sqlite_link(tmp_path)

    def slow(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO notes VALUES ('kept')")
        time.sleep(0.2)

    try:
        await link.write(lambda c: c.execute("CREATE TABLE notes (text TEXT)"))
        with anyio.move_on_after(0.05) as scope:
            await link.write(slow)
        assert scope.cancelled_caught
        assert await link.write(note("next")) == "next"  # type: ignore[arg-type]
        assert rows(tmp_path) == ["kept", "next"]
    finally:
        await link.close()


async def test_a_group_waits_for_the_writers_the_last_one_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four writers committed together each come back with another write, some later than
    others (their runs' next agent calls): the writer waits for them (at most half a COMMIT's
    time, stretched here to 0.3 s so the test does not depend on the machine's speed), so the
    second round is one COMMIT and one fsync, not four."""
    monkeypatch.setattr(sqlite_workers, "GATHER_MOST", 0.3)
    monkeypatch.setattr(sqlite_workers, "GATHER_SHARE", 1e6)
    link = sqlite_link(tmp_path)

    async def writer(index: int) -> None:
        await link.write(note(f"a{index}"))  # type: ignore[arg-type]
        await anyio.sleep(0.02 * index)
        await link.write(note(f"b{index}"))  # type: ignore[arg-type]

    try:
        seen = await two_rounds(link, writer)
        # the held write, the four first writes, the four second ones: three COMMITs
        assert seen.count("COMMIT") == 3 and seen.count("SAVEPOINT one_write") == 8
        assert rows(tmp_path) == sorted(["first", *(f"{r}{i}" for r in "ab" for i in range(4))])
    finally:
        await link.close()


async def test_a_writer_alone_never_waits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One writer committing again and again (one run at a time) is answered at once: the
    group it makes holds it alone, so there is no one to wait for."""
    monkeypatch.setattr(sqlite_workers, "GATHER_MOST", 1.0)
    monkeypatch.setattr(sqlite_workers, "GATHER_SHARE", 1e6)
    link = sqlite_link(tmp_path)
    try:
        await link.write(lambda c: c.execute("CREATE TABLE notes (text TEXT)"))
        for index in range(5):
            began = time.monotonic()
            await link.write(note(f"n{index}"))  # type: ignore[arg-type]
            assert time.monotonic() - began < 0.5  # not the stretched second of waiting
    finally:
        await link.close()


def test_a_write_whose_event_loop_closed_leaves_the_writer_serving_others(
    tmp_path: Path,
) -> None:
    """One store used from successive event loops (`run_sync`, a notebook's interrupted cell):
    a loop that closes while its write is on the thread never stops the writer answering the
    next loop's writes."""
    link = sqlite_link(tmp_path)
    release = threading.Event()

    def held(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO notes VALUES ('kept')")
        release.wait(5)

    async def gives_up() -> None:
        await link.write(lambda c: c.execute("CREATE TABLE notes (text TEXT)"))
        with anyio.move_on_after(0.05):
            await link.write(held)

    async def writes_again() -> object:
        with anyio.fail_after(5):
            try:
                return await link.write(note("next"))  # type: ignore[arg-type]
            finally:
                await link.close()

    anyio.run(gives_up)  # its loop is closed while `held` still runs
    release.set()
    time.sleep(0.1)  # the writer answers the closed loop
    assert anyio.run(writes_again) == "next"
    assert rows(tmp_path) == ["kept", "next"]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists open files in /proc")
async def test_a_groups_savepoints_keep_their_journal_in_memory(tmp_path: Path) -> None:
    """Each write of a group runs in a savepoint, whose journal holds the pages the write
    changes. Past 64 KB SQLite spilled that journal to a temporary file (created, written page
    by page, deleted) unless the connection keeps temporary data in memory, as the store's
    connections do."""
    link = sqlite_link(tmp_path)
    opened: list[str] = []

    def rewrite(connection: sqlite3.Connection) -> None:
        connection.execute("UPDATE notes SET text = upper(text)")  # every page: about 300 KB
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                opened.append(os.readlink(f"/proc/self/fd/{fd}"))

    def filled(connection: sqlite3.Connection) -> None:
        connection.execute("CREATE TABLE notes (text TEXT)")
        connection.executemany("INSERT INTO notes VALUES (?)", [("x" * 1000,)] * 300)

    try:
        await link.write(filled)
        outcomes = await queued_behind(link, [rewrite, rewrite])
        assert outcomes == [None, None]
        assert any(path.endswith("writer.db-wal") for path in opened)  # what was listed
        assert not [path for path in opened if "etilqs_" in path]  # SQLite's temporary files
    finally:
        await link.close()


async def test_a_read_taken_while_a_group_gathers_runs_at_once_and_leaves_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A brief read queued while the writer waits for the writers it answered last is run at
    once, before the group's transaction begins (it sees none of the group's writes), and the
    group goes on gathering: one COMMIT for the second round, not one before the read and one
    after it."""
    monkeypatch.setattr(sqlite_workers, "GATHER_MOST", 0.3)
    monkeypatch.setattr(sqlite_workers, "GATHER_SHARE", 1e6)
    link = sqlite_link(tmp_path)
    counted: list[int] = []

    def count(connection: sqlite3.Connection) -> int:
        found: int = connection.execute("SELECT count(*) FROM notes").fetchone()[0]
        return found

    async def writer(index: int) -> None:
        await link.write(note(f"a{index}"))  # type: ignore[arg-type]
        await anyio.sleep(0.04 * index)
        await link.write(note(f"b{index}"))  # type: ignore[arg-type]

    async def reader() -> None:
        await link.write(note("r"))  # type: ignore[arg-type]
        await anyio.sleep(0.02)  # the group has taken b0 and waits for the others
        counted.append(await link.read(count, brief=True))

    try:
        seen = await two_rounds(link, writer, reader)
        assert counted == [6]  # first, a0 to a3 and r: none of the group's b writes
        # the held write, the first round and r, the second round: three COMMITs
        assert seen.count("COMMIT") == 3 and seen.count("SAVEPOINT one_write") == 9
    finally:
        await link.close()


async def test_a_read_between_groups_takes_nothing_from_the_writers_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writers answered last are waited for from the end of their group's COMMIT; a read
    the writer runs alone meanwhile (0.3 s here) moves that wait on by its own time, so the
    last of them (back 0.47 s after the COMMIT, inside the 0.4 s wait plus the read's 0.3 s)
    still joins the second round: one COMMIT, not two."""
    monkeypatch.setattr(sqlite_workers, "GATHER_MOST", 0.4)
    monkeypatch.setattr(sqlite_workers, "GATHER_SHARE", 1e6)
    link = sqlite_link(tmp_path)

    def slow_count(connection: sqlite3.Connection) -> int:
        found: int = connection.execute("SELECT count(*) FROM notes").fetchone()[0]
        time.sleep(0.3)
        return found

    async def writer(index: int) -> None:
        await link.write(note(f"a{index}"))  # type: ignore[arg-type]
        await anyio.sleep(0.02 + 0.15 * index)
        await link.write(note(f"b{index}"))  # type: ignore[arg-type]

    async def reader() -> None:
        await link.write(note("r"))  # type: ignore[arg-type]
        assert await link.read(slow_count, brief=True) == 6  # first, a0 to a3 and r

    try:
        seen = await two_rounds(link, writer, reader)
        # the held write, the first round and r, the second round: three COMMITs
        assert seen.count("COMMIT") == 3 and seen.count("SAVEPOINT one_write") == 9
    finally:
        await link.close()
