"""The SQL store's own connections to the database drivers, for what every run does.

A run on a thread reads it once and commits once per agent call. Through SQLAlchemy's async
engine each statement of those costs several round trips: on SQLite each cursor call
(`execute`, `fetchall`, `close`, and the pool's `rollback` on return) is a hand-off to
aiosqlite's thread and back, about 0.1 to 0.3 ms of CPU each on a busy machine, and SQLAlchemy's
per-statement work comes on top. So the store keeps connections of its own (`SQLiteLink`,
`PostgresLink`) and runs those operations on the driver directly (`network.threads.sql_fast`):

- SQLite: each connection is a `sqlite3` connection with a worker thread of its own
  (`sqlite_workers`). A whole transaction (BEGIN, its statements, COMMIT) is one function run
  on that thread: one hand-off per transaction, whatever it holds. Writes go to one writer
  connection, which commits the writes queued while it worked together, in one transaction
  (group commit: one fsync for all); reads to the writer while it is idle, and brief ones (a
  thread the process holds) while it works too (its page cache is warm), else to a pool of
  connections. Blocking calls (a busy wait for the write lock, the fsync of a commit) wait
  there, never on the event loop.
- PostgreSQL: psycopg connections used through their libpq handle (`pg_wire`: a third of
  asyncpg's client CPU a round trip), or `asyncpg` connections when the connection's
  arguments have no libpq equivalent (an SSL context, server settings); each operation is one
  statement (one round trip), which PostgreSQL runs atomically on its own.

Connections are opened on first use, at most `size` of them, and reused (most recently
released first); they belong to the event loop that opened them, like the engine's. A driver's
error leaves as SQLAlchemy's `DBAPIError` (which `sql_errors` turns into `ThreadStoreError`),
and the connection it happened on is closed rather than reused. A PostgreSQL connection the
server closed while it was idle is replaced when it is next taken, here and in the engine's
pool (`skip_lost_connections`), so a server restart fails no statement. The library's own errors (a
stale revision, an answered call) raised inside a transaction roll it back and pass unchanged.

`listeners` are called with the text of every statement run here (tests count them).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sqlite3
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import anyio
from sqlalchemy import event
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.util import concurrency

from network.errors import ConfigurationError
from network.threads import pg_wire
from network.threads.sqlite_workers import Worker, Write, Writer, synced_as

T = TypeVar("T")
C = TypeVar("C")
Listener = Callable[[str], None]
WRITE = "BEGIN IMMEDIATE"


class _Pool(Generic[C]):
    """At most `size` connections, opened on demand, the most recently released reused first.

    Taking a free connection does not yield to the event loop (an anyio semaphore would, twice
    per use: a loop iteration each, on every load and commit)."""

    def __init__(
        self,
        open_one: Callable[[], Awaitable[C]],
        close_one: Callable[[C], Awaitable[None]],
        size: int,
        lost: Callable[[C], bool] = lambda connection: False,
    ) -> None:
        self._open = open_one
        self._close = close_one
        self._lost = lost
        self._size = max(1, size)
        self._idle: list[C] = []
        self._opened: list[C] = []
        self._waiting: deque[asyncio.Future[C | None]] = deque()

    async def take(self) -> C:
        """A connection of the pool's (give it back with `give_back` or `discard`).

        An idle connection found lost (`lost`: the server closed it meanwhile) is closed and
        its slot opens a new one: nothing was sent on it, so the caller's statement is not
        the one to fail."""
        while self._idle:
            connection = self._idle.pop()
            if not self._lost(connection):
                return connection
            self._opened.remove(connection)
            try:
                return await self._new()  # takes the slot before it awaits anything
            finally:
                with anyio.CancelScope(shield=True):
                    await self._quietly_close(connection)
        if len(self._opened) < self._size:
            return await self._new()
        waiter: asyncio.Future[C | None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            handed = await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():  # handed over as we were cancelled
                handed_over = waiter.result()
                if handed_over is None:
                    self._wake(None)
                else:
                    self.give_back(handed_over)
            raise
        return await self._new() if handed is None else handed

    async def _new(self) -> C:
        placeholder: Any = object()
        self._opened.append(placeholder)  # the slot is taken while it opens
        try:
            connection = await self._open()
        except BaseException:
            self._opened.remove(placeholder)
            self._wake(None)
            raise
        self._opened[self._opened.index(placeholder)] = connection
        return connection

    def give_back(self, connection: C) -> None:
        """Return a connection that is fine to reuse."""
        if not self._wake(connection):
            self._idle.append(connection)

    async def discard(self, connection: C) -> None:
        """Close a connection that failed (its slot goes to a waiter, who opens a new one)."""
        if connection in self._opened:
            self._opened.remove(connection)
        self._wake(None)
        with anyio.CancelScope(shield=True):
            await self._quietly_close(connection)

    def _wake(self, connection: C | None) -> bool:
        """Hand `connection` (None: a free slot) to the first caller still waiting."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return True
        return False

    async def _quietly_close(self, connection: C) -> None:
        with contextlib.suppress(Exception):  # a broken connection may fail to close: it is gone
            await self._close(connection)

    async def close(self) -> None:
        opened, self._opened, self._idle = self._opened, [], []
        for connection in opened:
            await self._quietly_close(connection)


class SQLiteLink:
    """The store's own SQLite connections (see the module docstring)."""

    def __init__(
        self,
        arguments: tuple[Any, Any],
        *,
        synchronous: str,
        busy_timeout: float,
        size: int,
    ) -> None:
        self._arguments = arguments
        self._synchronous = synchronous
        self._busy_timeout = busy_timeout
        self.listeners: list[Listener] = []
        self._pool: _Pool[Worker] = _Pool(self._open, self._stop, size)
        self._writer: Writer | None = None  # opened on the first write

    def connect(self) -> sqlite3.Connection:
        """A new connection as every connection of the store is set up (on the worker)."""
        args, kwargs = self._arguments
        kwargs = {**kwargs, "check_same_thread": False, "isolation_level": None}
        connection: sqlite3.Connection = sqlite3.connect(*args, **kwargs)
        configure_sqlite(connection, self._synchronous, self._busy_timeout)
        return connection

    async def _open(self) -> Worker:
        return Worker(self.connect, self._synchronous.upper(), self.listeners)

    @staticmethod
    async def _stop(worker: Worker) -> None:
        await worker.stop()

    async def run(self, work: Callable[[sqlite3.Connection], T], *, durable: bool = True) -> T:
        """Run `work` (a whole transaction: it begins and ends it) on one connection's thread.
        `durable=False`: its commit is not synced to disk (it survives the process, not a
        power cut), for writes nothing depends on after a crash (run leases, which expire
        anyway)."""
        pool = self._pool
        worker = await pool.take()
        wanted = "NORMAL" if not durable and worker.configured != "OFF" else worker.configured
        try:
            result: T = await worker.call(functools.partial(synced_as, work, worker, wanted))
        except sqlite3.Error as exc:
            await pool.discard(worker)
            raise DBAPIError("(sqlite transaction)", None, exc) from exc
        except BaseException:  # the library's own refusal, or a cancellation: still usable
            pool.give_back(worker)
            raise
        pool.give_back(worker)
        return result

    async def read(self, work: Callable[[sqlite3.Connection], T], *, brief: bool = False) -> T:
        """Run `work` (a whole read transaction) on the writer's connection when it has nothing
        else to do, else on a connection of the pool, so a long read never waits for a write
        (nor holds one up). `brief`: a read of a few rows (a thread the process holds: its
        row, its keys and what was committed since) goes to the writer even while it works,
        after the group of writes it is committing and at most the next one.

        In WAL mode a connection drops its whole page cache when it finds the database changed
        by another connection: a reader of the pool reads every page of a load from the
        operating system again after each commit (about ten `pread`s a load), and its thread
        takes the interpreter's lock in turn with the writer's and the event loop's; the
        writer's cache holds what it wrote, and its thread is awake."""
        writer = self._writer
        if writer is None or (writer.waited_on and not brief):
            return await self.run(work)
        try:
            result: T = await writer.call(work)
        except sqlite3.Error as exc:  # the writer opens a fresh connection for the next
            raise DBAPIError("(sqlite transaction)", None, exc) from exc
        return result

    async def statement(
        self, sql: str, arguments: tuple[Any, ...], *, durable: bool = True
    ) -> list[Any]:
        """The rows of one statement, run on its own (its own transaction). `durable=False`:
        its commit is not synced to disk (it survives the process, not a power cut), for
        writes nothing depends on after a crash (run leases, which expire anyway)."""

        def run(connection: sqlite3.Connection) -> list[Any]:
            return connection.execute(sql, arguments).fetchall()

        return await self.write(run, begin=None, durable=durable)

    async def write(
        self,
        body: Callable[[sqlite3.Connection], T],
        *,
        begin: str | None = WRITE,
        durable: bool = True,
    ) -> T:
        """`body(connection)` as a write transaction (`begin` ... COMMIT; `begin=None`: a
        single statement, in autocommit when it runs alone) on the link's writer connection,
        committed together with the writes queued beside it (`sqlite_workers.Writer`): the
        answer comes once its COMMIT is done. `durable=False`: not synced to disk unless a
        write committed with it is (it survives the process, not a power cut), for writes
        nothing depends on after a crash (run leases, a served run's input)."""
        if self._writer is None:
            self._writer = Writer(self.connect, self._synchronous.upper(), self.listeners)
        try:
            result: T = await self._writer.call(Write(body, begin, durable))
        except sqlite3.Error as exc:  # the writer opens a fresh connection for the next
            raise DBAPIError("(sqlite transaction)", None, exc) from exc
        return result

    async def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            await writer.stop()
        await self._pool.close()


GENERIC_PLANS = "SET plan_cache_mode = force_generic_plan"
"""Run on each of `PostgresLink`'s connections as it opens (a statement, not a startup
`options` parameter, which connection poolers may refuse). Both drivers prepare each statement
once per connection, but PostgreSQL plans a prepared statement anew for each of its first five
runs and after that keeps a custom plan for as long as the generic plan's estimated cost is
above theirs: the load's (seven subqueries) never passed, so every load was planned again,
about half of its server CPU (benchmarks/README.md, "The load planned once per connection").
Every statement run here finds its rows by key (the thread's id, the user's and app's names,
and a record's number within its thread), which is the plan a custom plan picks anyway, as for
the durable engine's statements (`network.durable.connections`)."""


class PostgresLink:
    """The store's own PostgreSQL connections, on libpq (`pg_wire`), or through asyncpg when
    the connection's arguments have no libpq equivalent (see the module docstring); each
    statement planned once per connection (`GENERIC_PLANS`)."""

    def __init__(self, arguments: dict[str, Any], *, size: int) -> None:
        self._arguments = arguments
        self._conninfo = pg_wire.conninfo(arguments)
        self.listeners: list[Listener] = []
        self._pool: _Pool[Any] = _Pool(self._open, self._close, size, lost=_lost)

    async def _open(self) -> Any:
        if self._conninfo is not None:
            return await pg_wire.Connection.open(self._conninfo, (GENERIC_PLANS,))
        import asyncpg  # noqa: PLC0415 (the PostgreSQL driver, loaded only for PostgreSQL)

        connection = await asyncpg.connect(**self._arguments)
        try:
            await connection.execute(GENERIC_PLANS)
        except BaseException:
            await connection.close()
            raise
        return connection

    @staticmethod
    async def _close(connection: Any) -> None:
        await connection.close()

    async def fetch(self, sql: str, *arguments: Any) -> list[Any]:
        """The rows of one statement (run on its own: atomic, one round trip)."""
        for listen in self.listeners:
            listen(sql)
        pool = self._pool
        connection = await pool.take()
        try:
            rows: list[Any] = await connection.fetch(sql, *arguments)
        except Exception as exc:  # asyncpg's own errors, a lost connection
            if _is_driver_error(exc):
                await pool.discard(connection)
                raise DBAPIError(sql, None, exc) from exc
            pool.give_back(connection)
            raise
        except BaseException:  # cancelled mid-statement: the connection's state is unknown
            await pool.discard(connection)
            raise
        pool.give_back(connection)
        return rows

    async def close(self) -> None:
        await self._pool.close()


def _lost(connection: Any) -> bool:
    """Whether a PostgreSQL connection is known lost (the server closed it while it was idle,
    as the event loop saw): `pg_wire.Connection.broken`, asyncpg's `is_closed()`."""
    broken = getattr(connection, "broken", None)
    if isinstance(broken, bool):
        return broken
    is_closed = getattr(connection, "is_closed", None)
    return bool(is_closed()) if callable(is_closed) else False


def skip_lost_connections(engine: Any) -> None:
    """Have `engine` (a PostgreSQL engine's `sync_engine`) replace a pooled connection the
    server closed while it was idle when it is checked out, rather than fail the statement
    sent on it: a server restarted, or an idle timeout (a proxy's, `idle_session_timeout`),
    would otherwise fail one operation per pooled connection (a run's commit among them).
    No round trip: asyncpg knows its connection is closed once the event loop has seen the
    socket close (`pool_pre_ping` would ask the server on every checkout)."""
    event.listen(engine, "checkout", _refuse_lost)


def _refuse_lost(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    if _lost(getattr(dbapi_connection, "_connection", None)):
        raise DisconnectionError("the server closed this connection while it was idle")


def _is_driver_error(exc: BaseException) -> bool:
    import asyncpg  # noqa: PLC0415 (loaded with SQLAlchemy's PostgreSQL dialect)
    import psycopg  # noqa: PLC0415 (loaded already: a connection raised it)

    drivers = (asyncpg.PostgresError, asyncpg.InterfaceError, psycopg.Error, OSError)
    return isinstance(exc, drivers)


_SQLALCHEMY_OWN = (
    "async_creator_fn",
    "prepared_statement_cache_size",
    "prepared_statement_name_func",
)


def postgres_arguments(dialect: Any, url: Any, connect_args: dict[str, Any]) -> dict[str, Any]:
    """What `asyncpg.connect` takes for the engine's URL and `connect_args`, as SQLAlchemy's
    asyncpg dialect would pass them (its own options left out)."""
    _args, params = dialect.create_connect_args(url)
    params = {**params, **connect_args}
    for own in (
        "async_creator_fn",
        "prepared_statement_cache_size",
        "prepared_statement_name_func",
    ):
        params.pop(own, None)
    return dict(params)


def configure_sqlite(connection: Any, synchronous: str, busy_timeout: float) -> None:
    """WAL mode, durability, lock waits and where temporary data goes, as every connection of
    the store has them."""
    if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise ConfigurationError("sqlite_synchronous must be OFF, NORMAL, FULL or EXTRA")
    cursor = connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    switch_to_wal(cursor, busy_timeout)
    cursor.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    # A group commit runs each write in a savepoint, whose journal holds the pages the write
    # changes; past 64 KB SQLite spills it to a file in the system's temporary directory
    # (written page by page, deleted at the group's end: a file every ten runs and three to
    # four `pwrite`s a run, four runs at a time). Kept in memory instead (temporary tables
    # would be too: the store makes none).
    cursor.execute("PRAGMA temp_store = MEMORY")
    cursor.close()


def switch_to_wal(cursor: Any, timeout: float) -> None:
    """Put the database in WAL mode, waiting out other connections doing the same.

    On a new database file, connections that switch it to WAL at the same moment each hold a
    shared lock while asking for the exclusive one; SQLite sees the deadlock and answers
    "database is locked" at once, without waiting `busy_timeout` (its busy handler is not called
    for a possible deadlock). The switch only has to happen once per file, so the connections
    that lose simply try again, briefly backing off, until the file reports WAL.
    """
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            if str(cursor.fetchone()[0]).lower() == "wal":
                return
        except Exception as exc:  # the driver's OperationalError: "database is locked"
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise ConfigurationError("SQLite refused WAL mode for the thread store's database")
        _pause(delay)
        delay = min(delay * 2, 0.05)


def _pause(seconds: float) -> None:
    """Sleep inside a connection event: awaited on the event loop when SQLAlchemy runs the
    event in a greenlet of the async engine (other tasks go on meanwhile), else a plain sleep
    (on a worker thread of `SQLiteLink`)."""
    await_ = getattr(concurrency, "await_", None) or concurrency.await_only
    if concurrency.in_greenlet():
        await_(anyio.sleep(seconds))
    else:
        time.sleep(seconds)
