"""What a process asks of its database, counted from the driver's side (benchmarks only).

`install(kind)` ("sqlite" or "postgres") patches this process so that `COUNTER` sees:

- `statements`: SQL statements the database executed, BEGIN / COMMIT / ROLLBACK / PRAGMA not
  counted (SQLite: each connection's trace callback; PostgreSQL: the Execute and Query
  messages the client wrote, read off the wire);
- `transactions`: BEGINs, plus statements run outside a transaction (each its own);
- `round_trips`: the times the event loop waited on the database: SQLite, calls handed to a
  database thread (aiosqlite's, or the store's own) and back; PostgreSQL, the messages that
  make the server answer (Sync, Query) the client wrote through asyncio (asyncpg), and the
  results the store's libpq connections waited for (`network.threads.pg_wire`).

PostgreSQL's messages are read where asyncio's own socket transport writes them: call it in a
process whose event loop is asyncio's (uvloop's transports are not watched). Used by
`stored_run.py` and `agui_served.py`; the counting costs CPU, so those measure time without it.
"""

from __future__ import annotations

import threading
from typing import Any


class Counter:
    """Statements, transactions and round trips, fed from the driver's side (see above)."""

    def __init__(self) -> None:
        self.statements = 0
        self.transactions = 0
        self.round_trips = 0
        # per thread: each SQLite connection runs on a thread of its own, and concurrent
        # runs' connections are in transactions of their own at once (one flag for the
        # process counted a statement of one as a transaction while another had committed)
        self._in: dict[int, bool] = {}

    def statement(self, sql: str) -> None:
        head = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
        thread = threading.get_ident()
        if head in ("BEGIN", "START"):
            self.transactions += 1
            self._in[thread] = True
        elif head in ("COMMIT", "END") or sql.strip().upper() == "ROLLBACK":
            self._in[thread] = False
        elif head in ("PRAGMA", "SAVEPOINT", "RELEASE", "ROLLBACK"):
            pass  # a group commit's savepoints (ROLLBACK TO one), no statements of the run's
        else:
            self.statements += 1
            if not self._in.get(thread, False):
                self.transactions += 1

    def snapshot(self) -> tuple[int, int, int]:
        return self.statements, self.transactions, self.round_trips


COUNTER = Counter()
PREPARED: dict[bytes, str] = {}
BOUND = ["SELECT"]


def install(kind: str) -> None:
    """Count this process's statements on `kind` ("sqlite", "postgres", or stored_run.py's
    "memory-pg", whose round trips go to PostgreSQL; else nothing)."""
    if kind.startswith("sqlite"):
        _count_sqlite()
    elif kind.startswith("postgres") or kind == "memory-pg":
        _count_postgres()


def _count_sqlite() -> None:
    """Every SQLite connection's statements, and the hand-offs to the threads that run them
    (aiosqlite's, and the store's own where it has them)."""
    import sqlite3

    import aiosqlite.core

    def count(sql: str) -> None:
        if not sql.startswith("--"):  # a statement run by a trigger
            COUNTER.statement(sql)

    class Traced(sqlite3.Connection):
        """Counts its statements, beside any trace callback its owner sets."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            super().set_trace_callback(count)

        def set_trace_callback(self, callback: Any) -> None:
            if callback is None:
                super().set_trace_callback(count)
                return

            def both(sql: str) -> None:
                count(sql)
                callback(sql)

            super().set_trace_callback(both)

    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> Any:
        return connect(*args, factory=Traced, **kwargs)

    sqlite3.connect = traced  # aiosqlite and the store look it up when they connect
    _counted_handoffs(aiosqlite.core.Connection, "_execute")
    try:
        from network.threads import sqlite_workers
    except ImportError:  # a checkout from before the store's threads had a module of their own
        try:
            from network.threads import sql_links
        except ImportError:  # a checkout from before the store had threads of its own
            return
        _counted_handoffs(sql_links._Worker, "call")
        return
    _counted_handoffs(sqlite_workers.Worker, "call")  # the writer's calls too


def _counted_handoffs(owner: Any, name: str) -> None:
    handoff = getattr(owner, name)

    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        COUNTER.round_trips += 1
        return await handoff(self, *args, **kwargs)

    setattr(owner, name, counted)


def _count_postgres() -> None:
    """Read PostgreSQL's frontend messages off the client's socket writes (asyncpg's), and
    count the statements and results the store's libpq connections send and wait for."""
    import asyncio.selector_events as events

    transport = events._SelectorSocketTransport
    write = transport.write

    def watched(self: Any, data: Any) -> None:
        feed(bytes(data))
        write(self, data)

    transport.write = watched  # type: ignore[method-assign]
    try:
        from network.threads.pg_wire import Connection
    except ImportError:  # a checkout from before the store's connections were on libpq
        return
    fetch, result = Connection.fetch, Connection._result

    async def counted_fetch(self: Any, sql: str, *arguments: Any) -> Any:
        COUNTER.statement(sql)
        return await fetch(self, sql, *arguments)

    async def counted_result(self: Any) -> Any:  # a prepare's, or a statement's
        COUNTER.round_trips += 1
        return await result(self)

    Connection.fetch = counted_fetch  # type: ignore[method-assign]
    Connection._result = counted_result  # type: ignore[method-assign]


def feed(data: bytes) -> None:
    """Count the frontend messages in `data` (one socket write of the client's)."""
    position = 0
    while position + 5 <= len(data):
        kind = chr(data[position])
        length = int.from_bytes(data[position + 1 : position + 5], "big")
        if length < 4:
            return
        body = data[position + 5 : position + 1 + length]
        if kind == "Q":
            COUNTER.round_trips += 1
            for sql in body.rstrip(b"\x00").decode(errors="replace").split(";"):
                if sql.strip():
                    COUNTER.statement(sql)
        elif kind == "P":  # Parse: name NUL query NUL ...; remember the text for its Execute
            name, _, rest = body.partition(b"\x00")
            PREPARED[name] = rest.partition(b"\x00")[0].decode(errors="replace")
        elif kind == "B":  # Bind: portal NUL statement NUL ...
            _portal, _, rest = body.partition(b"\x00")
            BOUND[0] = PREPARED.get(rest.partition(b"\x00")[0], "SELECT")
        elif kind == "E":
            COUNTER.statement(BOUND[0])
        elif kind == "S":
            COUNTER.round_trips += 1
        position += 1 + length
