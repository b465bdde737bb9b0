"""This process's own connections to DBOS's system database: one statement, autocommit, retried.

The step table (`step_table`), the queue's claim (`queue_table`), the event log's writes
(`event_log`) and the takeover's look for dead processes (`takeover`) each write or read DBOS's
rows with one small statement. Through DBOS's SQLAlchemy engine a statement costs far more CPU
than the database spends on it (statements built, compiled and cached per call, a pool
checkout and a ping), so these go through plain DBAPI connections of their own:

- autocommit: one statement is one transaction (SQLite: one write transaction, so a read and
  a write in one statement are atomic);
- at most `MAX_CONNECTIONS` per database and process, reused; blocking, so called from a
  thread, never on an event loop; on PostgreSQL `execute_async` runs a statement on the
  calling event loop itself (psycopg's async connections, at most `MAX_CONNECTIONS` per loop,
  the statement sent on their libpq handle: `network.durable.wire`): a recorded step then
  costs no thread hop, which costs more CPU than the statement;
- a statement the database did not take (a dropped or refused connection, a busy SQLite file)
  is retried on a new connection, with backoff up to `MAX_BACKOFF`, until the database
  answers, as DBOS blocks rather than lose a write. Every statement sent here is written so
  that running it twice is harmless (see each caller);
- PostgreSQL plans each statement once per connection (`GENERIC_PLANS`): the statements are
  prepared (`network.durable.wire`, psycopg's own after a few runs), and a prepared statement
  is otherwise planned anew for each of its first five runs on a connection, which is all a
  run's once-a-run statements ever get on one of a worker's connections. Their plans cost
  PostgreSQL more than running them (0.3 to 0.5 ms a plan of a statement with the run's owner
  check, against 0.15 to 0.3 ms to run it; pg_stat_statements over a scale-out batch). Every
  statement here finds its rows by key, or through the index its literal conditions pick (the
  claim's `status = 'ENQUEUED'`, the takeover's `'PENDING'`), so the generic plan is the one
  a custom plan would be (over 200,000 finished runs they ran no slower on it).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anyio
import anyio.to_thread
import structlog

from network.durable import wire

T = TypeVar("T")
Kept = tuple[Any, wire.Watch]
"""A pooled async connection and its socket's watch (`network.durable.wire.Watch`)."""
log = structlog.get_logger("network.durable")

MAX_BACKOFF = 5.0
"""Seconds: the longest wait between two attempts of a statement the database did not take."""
MAX_CONNECTIONS = 8
"""Connections a process opens to the system database, at most (a statement takes about
0.2 ms: eight serve thousands a second, and many workers on one PostgreSQL stay far from its
connection limit)."""
GENERIC_PLANS = "SET plan_cache_mode = force_generic_plan"
"""Sent on each of these connections when it opens (see the module docstring): a statement,
not a startup `options` parameter, which connection poolers may refuse."""


class Connections:
    """Autocommit connections to one system database, and statements run on them with retry."""

    def __init__(self, sys_db: Any) -> None:
        self.sqlite = bool(sys_db._is_sqlite)
        self.app_name: str | None = sys_db.app_name
        url = sys_db.engine.url
        if self.sqlite:
            self.path = url.database or ":memory:"
            self.conninfo = ""
            self.schema = ""
        else:
            self.path = ""
            self.conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
            self.schema = '"' + str(sys_db.schema).replace('"', '""') + '"'
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        # per event loop: its idle async connections and the limit of its connections
        self._loops: weakref.WeakKeyDictionary[Any, tuple[list[Kept], asyncio.Semaphore]] = (
            weakref.WeakKeyDictionary()
        )

    def table(self, name: str) -> str:
        """`name`, qualified with DBOS's schema on PostgreSQL."""
        return f"{self.schema}.{name}" if self.schema else name

    def mark(self, name: str) -> str:
        """The placeholder of the named parameter `name` in this database's DBAPI style."""
        return f":{name}" if self.sqlite else f"%({name})s"

    def now_ms(self) -> str:
        """The database clock in milliseconds since the epoch, as DBOS stamps its rows."""
        if self.sqlite:
            return "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
        return "CAST(EXTRACT(EPOCH FROM now()) * 1000 AS BIGINT)"

    def execute(self, sql: str, params: dict[str, Any]) -> list[Any]:
        """Run one statement (blocking: call from a thread); its rows."""
        backoff = 0.05
        with self._slots:
            while True:
                connection = None
                try:
                    connection = self._take()  # (connecting may fail too: retried alike)
                    rows = connection.execute(sql, params).fetchall()
                except Exception as exc:
                    if connection is not None:
                        close_quietly(connection)
                    if not self._retriable(exc):
                        raise
                    log.warning("durable_statement_retry", error=type(exc).__name__, wait=backoff)
                    time.sleep(backoff)
                    backoff = min(backoff * 2, MAX_BACKOFF)
                    continue
                self._give(connection)
                return list(rows)

    async def execute_async(self, sql: str, params: dict[str, Any]) -> list[Any]:
        """Run one statement without blocking the event loop; its rows.

        On PostgreSQL on the loop itself, on a connection of this loop's own; on SQLite
        (no async driver here) in a worker thread. A cancelled statement's connection is
        discarded, never reused."""
        if self.sqlite:
            rows: list[Any] = await anyio.to_thread.run_sync(self.execute, sql, params)
            return rows
        idle, slots = self._loop_pool()
        backoff = 0.05
        async with slots:
            while True:
                kept = None
                try:
                    kept = idle.pop() if idle else await self._connect_async()
                    rows = await wire.execute(kept[0], sql, params, kept[1])
                except Exception as exc:
                    if kept is not None:
                        kept[1].stop()
                        await _close_async(kept[0])
                    if not self._retriable(exc):
                        raise
                    log.warning("durable_statement_retry", error=type(exc).__name__, wait=backoff)
                    await anyio.sleep(backoff)
                    backoff = min(backoff * 2, MAX_BACKOFF)
                    continue
                except BaseException:  # cancelled mid-statement: the connection's state is unknown
                    if kept is not None:
                        wire.discard(*kept)
                    raise
                idle.append(kept)
                return rows

    def _loop_pool(self) -> tuple[list[Kept], asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        pool = self._loops.get(loop)
        if pool is None:
            # asyncio's: taking a free slot is a decrement (anyio's also looks for a
            # cancellation first, a tenth of a statement's CPU); the loop is asyncio's (DBOS's)
            pool = self._loops[loop] = ([], asyncio.Semaphore(MAX_CONNECTIONS))
        return pool

    async def _connect_async(self) -> tuple[Any, wire.Watch]:
        """A new connection of this loop's pool, and its socket's watch."""
        import psycopg  # noqa: PLC0415 (only with a PostgreSQL system database)

        connection = await psycopg.AsyncConnection.connect(
            self.conninfo, autocommit=True, connect_timeout=10
        )
        try:
            await connection.execute(GENERIC_PLANS)
            return connection, wire.Watch(connection)
        except BaseException:
            connection.pgconn.finish()
            raise

    def connect(self) -> Any:
        """A new autocommit connection of this database, not from the pool (a listener's)."""
        if self.sqlite:
            return sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30.0
            )
        import psycopg  # noqa: PLC0415 (only with a PostgreSQL system database)

        connection = psycopg.connect(self.conninfo, autocommit=True, connect_timeout=10)
        try:
            connection.execute(GENERIC_PLANS)
        except BaseException:
            connection.close()
            raise
        return connection

    def connect_once(self, sql: str) -> None:
        """Run `sql` once on a new connection that gives up quickly (no retry): for a
        message at shutdown, which must not wait for a database that is gone."""
        if self.sqlite:
            raise RuntimeError("connect_once is for PostgreSQL")
        import psycopg  # noqa: PLC0415 (only with a PostgreSQL system database)

        with psycopg.connect(self.conninfo, autocommit=True, connect_timeout=2) as connection:
            connection.execute(sql)

    def close(self) -> None:
        """Close the idle connections; later statements open new ones."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            close_quietly(connection)
        for loop_idle, _ in list(self._loops.values()):
            while loop_idle:  # async connections of loops that may run on another thread
                wire.discard(*loop_idle.pop())

    def _retriable(self, exc: Exception) -> bool:
        if self.sqlite:
            return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
        import psycopg  # noqa: PLC0415 (only with a PostgreSQL system database)

        # A dropped or refused connection, or a server short of resources: not an error of
        # the statement, which is retried.
        return isinstance(exc, psycopg.OperationalError) and not isinstance(
            exc, psycopg.errors.QueryCanceled
        )

    def _take(self) -> Any:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self.connect()

    def _give(self, connection: Any) -> None:
        with self._lock:
            self._idle.append(connection)


async def _close_async(connection: Any) -> None:
    try:
        await connection.close()
    except Exception:  # a connection already broken has nothing left to close
        log.debug("durable_connection_close_failed", exc_info=True)


def close_quietly(connection: Any) -> None:
    try:
        connection.close()
    except Exception:  # a connection already broken has nothing left to close
        log.debug("durable_connection_close_failed", exc_info=True)


class PerDatabase(Generic[T]):
    """One `T` per DBOS system database, per process, made by `make(sys_db)` on first use
    (keyed by the database object's identity: a new one of a reused id gets its own)."""

    def __init__(self, make: Callable[[Any], T]) -> None:
        self._make = make
        self._entries: dict[int, tuple[Any, T]] = {}
        self._lock = threading.Lock()

    def of(self, sys_db: Any) -> T:
        with self._lock:
            entry = self._entries.get(id(sys_db))
            if entry is None or entry[0] is not sys_db:
                entry = self._entries[id(sys_db)] = (sys_db, self._make(sys_db))
            return entry[1]

    def clear(self) -> list[T]:
        """Forget every one; those it held."""
        with self._lock:
            held = [value for _, value in self._entries.values()]
            self._entries.clear()
        return held


_pools = PerDatabase(Connections)


def connections(sys_db: Any) -> Connections:
    """The connections of DBOS system database `sys_db` (one pool per database, per process)."""
    return _pools.of(sys_db)


def close_connections() -> None:
    """Close every pool's idle connections (DBOS is shut down in this process)."""
    for pool in _pools.clear():
        pool.close()
