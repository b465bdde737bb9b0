"""The threads the SQL store's own SQLite connections run on (`sql_links.SQLiteLink`).

- `Worker`: one `sqlite3` connection and a thread that runs every call on it, in order, one
  at a time (a run's load, a test's own work).
- `Writer`: the connection every write transaction of the link runs on (and its reads while
  it has nothing else to do, brief ones while it works: see `SQLiteLink.read`). SQLite lets one
  writer at a time into a database, so writers on connections of their own only waited for
  each other (in SQLite's busy handler, which sleeps 1, 2, 5, 10 ms and more between tries).
  The writer's thread takes every transaction queued while it worked and commits them
  together (group commit): `BEGIN IMMEDIATE`, each one's body in a savepoint of its own, one
  `COMMIT`, so one fsync (at `synchronous=FULL`) for all of them, and one wake-up of the
  thread. Every caller gets its answer only after that `COMMIT`: a committed transaction is
  as durable as one committed alone. A body that raises the library's own error (a stale
  revision, a taken id) is rolled back to its savepoint, alone; a driver's error (or a failed
  `COMMIT`) rolls the group back and runs each transaction of it alone, as it would have run
  without the others. A transaction alone runs exactly as before: no savepoint.
  Before a group begins, the writer waits for the writers it answered last (and those that
  waited behind them) to come back, while their runs reach their next commit: at most half as
  long as the last COMMIT took and never over 2 ms, and not at all for a writer alone (one run
  at a time); a read taken meanwhile runs at once, before the group begins. Without it, four
  runs committing at once settled into groups of one or two (the first to come back found the
  writer idle and went alone), each group an fsync and a wake-up of the event loop.

A call, once handed over, runs to its end even when its caller is cancelled (a commit is never
cut in half); the caller then stops waiting for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable
from queue import Empty, SimpleQueue
from typing import Any, NamedTuple, TypeVar

import anyio

T = TypeVar("T")
Listener = Callable[[str], None]
Outcome = tuple[Any, bool]  # (result or exception, whether it failed)
MOST_TOGETHER = 32  # transactions one group commit holds at most
GATHER_SHARE = 0.5  # a group waits for its expected writes at most this share of a COMMIT
GATHER_MOST = 0.002  # and never longer than this (seconds)


class Write(NamedTuple):
    """A write transaction: `body(connection)` between `begin` (None: run it in autocommit
    when alone, for a single statement) and COMMIT; `durable`: its commit is synced."""

    body: Callable[[sqlite3.Connection], Any]
    begin: str | None
    durable: bool

    def alone(self, connection: sqlite3.Connection) -> Any:
        """The write as its own transaction (rolled back when anything fails)."""
        if self.begin is None:
            return self.body(connection)
        connection.execute(self.begin)
        try:
            result = self.body(connection)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        return result


class Worker:
    """One sqlite3 connection and the thread that runs every call on it, in order."""

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        synchronous: str,
        listeners: list[Listener],
    ) -> None:
        self._connect = connect
        # the connection's `PRAGMA synchronous` (`synced_as`; touched on the thread only)
        self.configured = self.synchronous = synchronous
        self._listeners = listeners
        self._calls: SimpleQueue[Any] = SimpleQueue()
        self.connection: sqlite3.Connection | None = None
        self._traced = False
        self._thread = threading.Thread(target=self._serve, name="agent-network-sqlite")
        self._thread.daemon = True
        self._thread.start()

    def _serve(self) -> None:
        while True:
            calls = self._take()
            if not calls:
                break
            try:
                connection = self._ready()
            except BaseException as exc:  # handed to the callers, whatever it is
                outcomes: list[Outcome] = [(exc, True)] * len(calls)
            else:
                outcomes = self._run(connection, [work for _, _, work in calls])
            _settle_all(calls, outcomes)
        if self.connection is not None:
            self.connection.close()

    def _take(self) -> list[Any]:
        """The next call (waiting for it); none: stop."""
        call = self._calls.get()
        return [] if call is None else [call]

    def _ready(self) -> sqlite3.Connection:
        """The thread's connection, opened on first use, traced only while anyone listens
        (SQLite expands every statement's text for a trace callback)."""
        if self.connection is None:
            self.connection = self._connect()
            self.synchronous = self.configured
            self._traced = False
        if self._traced is not bool(self._listeners):
            self._traced = not self._traced
            self.connection.set_trace_callback(self._trace if self._traced else None)
        return self.connection

    def _run(self, connection: sqlite3.Connection, works: list[Any]) -> list[Outcome]:
        return [_attempt(works[0], connection)]

    def _trace(self, sql: str) -> None:
        for listen in self._listeners:
            listen(sql)

    async def call(self, work: Any) -> Any:
        """Run `work` on the thread (a `Worker`: `work(connection)`; a `Writer`: a `Write`);
        its result, or its exception."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._calls.put((loop, future, work))
        return await future

    async def stop(self) -> None:
        self._calls.put(None)  # after the calls queued before it
        await anyio.to_thread.run_sync(self._thread.join)


class Writer(Worker):
    """The link's write transactions, those queued together committed together (see the
    module docstring)."""

    _stopping = False  # its stop was taken while gathering writes: after them
    waited_on = 0  # calls handed over and not answered yet (on the event loop)
    _expected = 1  # writers expected in the next group: the last group's and those it kept waiting
    _ended = 0.0  # when the last group's transaction ended (time.monotonic()), moved on by
    # the time reads took since: the writers expected back still get their whole wait
    _commit_took = 0.0  # how long it took, in seconds (its fsync, mostly)

    async def call(self, work: Any) -> Any:
        """Run `work` on the thread: a `Write`, or a read (`work(connection)`, run alone)."""
        self.waited_on += 1
        try:
            return await super().call(work)
        finally:
            self.waited_on -= 1

    def _take(self) -> list[Any]:
        if self._stopping:
            return []
        calls = super()._take()
        if not calls or not isinstance(calls[0][2], Write):
            return calls
        wait = min(GATHER_MOST, self._commit_took * GATHER_SHARE)
        while len(calls) < MOST_TOGETHER:
            call = self._next(len(calls) < self._expected, wait)
            if call is None:
                break
            calls.append(call)
        return calls

    def _next(self, expected: bool, wait: float) -> Any:
        """The next write queued for this group (None: the group is complete). `expected`: the
        writers just answered are expected back soon (their runs' next commits), so an empty
        queue is waited on for `wait` seconds from the last group's end: one COMMIT, one fsync,
        for all of them. A read taken meanwhile is run at once (the group's transaction has not
        begun)."""
        while True:
            try:
                if not expected or (left := self._ended + wait - time.monotonic()) <= 0:
                    call = self._calls.get_nowait()  # this thread alone takes: there is one
                else:
                    call = self._calls.get(timeout=left)
            except Empty:
                return None
            if call is None:  # stop, after these
                self._stopping = True
                return None
            if isinstance(call[2], Write):
                return call
            self._read_now(call)

    def _read_now(self, call: Any) -> None:
        """A read taken while a group gathers, run and answered before the group begins: it
        neither waits for the group's COMMIT nor cuts the group short."""
        try:
            connection = self._ready()
        except BaseException as exc:  # handed to the caller, whatever it is
            outcomes: list[Outcome] = [(exc, True)]
        else:
            outcomes = self._run(connection, [call[2]])
        _settle_all([call], outcomes)

    def _run(self, connection: sqlite3.Connection, works: list[Any]) -> list[Outcome]:
        if not isinstance(works[0], Write):  # a read, alone
            began = time.monotonic()
            outcomes = super()._run(connection, works)
            self._ended += time.monotonic() - began  # not taken from the writers' wait
            if outcomes[0][1] and isinstance(outcomes[0][0], sqlite3.Error):
                self._drop()
            return outcomes
        writes: list[Write] = works
        durable = writes[0].durable if len(writes) == 1 else any(w.durable for w in writes)
        wanted = "NORMAL" if not durable and self.configured != "OFF" else self.configured
        began = time.monotonic()
        if len(writes) == 1:
            outcomes = [_alone(writes[0], self, wanted, connection)]
        else:
            try:
                outcomes = synced_as(lambda c: _together(c, writes), self, wanted, connection)
            except sqlite3.Error:  # a driver's error, or the COMMIT's: each on its own
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                outcomes = self._each_alone(writes, wanted)
        self._ended = time.monotonic()
        self._commit_took = self._ended - began
        self._expected = len(writes) + self._calls.qsize()
        for exc, failed in outcomes:
            if failed and isinstance(exc, sqlite3.Error):
                self._drop()  # as a worker whose call failed is replaced: a fresh connection
                break
        return outcomes

    def _each_alone(self, writes: list[Write], wanted: str) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for write in writes:
            try:
                connection = self._ready()
            except BaseException as exc:
                outcomes.append((exc, True))
                continue
            outcome = _alone(write, self, wanted, connection)
            if outcome[1] and isinstance(outcome[0], sqlite3.Error):
                self._drop()
            outcomes.append(outcome)
        return outcomes

    def _drop(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def synced_as(
    work: Callable[[sqlite3.Connection], T], worker: Worker, wanted: str, connection: Any
) -> T:
    """`work` with the connection's commits synced as `wanted` ("NORMAL": not synced; else
    the store's level). The PRAGMA is sent only when the connection's level must change:
    a served run alternates unsynced (lease, input) and synced (agent call) transactions,
    and a PRAGMA on each side of every unsynced one cost as much as one of its statements."""
    if worker.synchronous != wanted:
        connection.execute(f"PRAGMA synchronous = {wanted}")
        worker.synchronous = wanted
    return work(connection)


def _alone(write: Write, worker: Worker, wanted: str, connection: sqlite3.Connection) -> Outcome:
    """A write run as its own transaction, synced as `wanted`."""
    try:
        return synced_as(write.alone, worker, wanted, connection), False
    except BaseException as exc:  # handed to the caller, whatever it is
        return exc, True


def _together(connection: sqlite3.Connection, writes: list[Write]) -> list[Outcome]:
    """The writes in one transaction, each in a savepoint: a body refused by the library is
    rolled back alone; a driver's error leaves (the caller rolls the whole group back)."""
    outcomes: list[Outcome] = []
    connection.execute("BEGIN IMMEDIATE")
    for write in writes:
        connection.execute("SAVEPOINT one_write")
        try:
            outcome: Outcome = (write.body(connection), False)
        except sqlite3.Error:
            raise
        except BaseException as exc:  # the library's own refusal: this one undone
            connection.execute("ROLLBACK TO one_write")
            outcome = (exc, True)
        connection.execute("RELEASE one_write")
        outcomes.append(outcome)
    connection.execute("COMMIT")
    return outcomes


def _attempt(work: Callable[[sqlite3.Connection], Any], connection: sqlite3.Connection) -> Outcome:
    try:
        return work(connection), False
    except BaseException as exc:  # handed to the caller, whatever it is
        return exc, True


def _settle_all(calls: list[Any], outcomes: list[Outcome]) -> None:
    """Hand each caller its outcome: one wake-up of each event loop for all of its calls."""
    if len(calls) == 1:
        loop, future, _ = calls[0]
        _answer(loop, [(future, outcomes[0])])
        return
    by_loop: dict[Any, list[tuple[asyncio.Future[Any], Outcome]]] = {}
    for (loop, future, _), outcome in zip(calls, outcomes, strict=True):
        by_loop.setdefault(loop, []).append((future, outcome))
    for loop, settled in by_loop.items():
        _answer(loop, settled)


def _answer(
    loop: asyncio.AbstractEventLoop, settled: list[tuple[asyncio.Future[Any], Outcome]]
) -> None:
    # A loop closed while its calls ran (one store used from successive loops: `run_sync`,
    # an interrupted notebook cell) has nobody waiting: the thread goes on serving the others.
    with contextlib.suppress(RuntimeError):  # "Event loop is closed"
        loop.call_soon_threadsafe(_settle, settled)


def _settle(settled: list[tuple[asyncio.Future[Any], Outcome]]) -> None:
    for future, (outcome, failed) in settled:
        if future.done():  # the caller was cancelled meanwhile
            continue
        if failed:
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
