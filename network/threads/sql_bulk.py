"""Reading a thread's records in bulk, without SQLAlchemy's per-row work.

The first read of a long thread in a process fetches tens of thousands of rows (a 10,000-call
thread holds 30,000 messages). Through a SQLAlchemy result each row becomes a `Row` and goes
through its processing: several microseconds a row, and the objects it makes set off the
garbage collector's passes, together most of such a read's time. These reads need none of it
(text and numbers, in order), so they go to the driver itself: on the same connection and in
the same transaction (so they see its snapshot), through `aiosqlite`'s cursor or `asyncpg`'s
`fetch` (see `BulkReader`). The SQL is SQLAlchemy's, compiled once for the
dialect; a driver's error leaves as SQLAlchemy's `DBAPIError`, as every other store failure
does (see `sql_errors`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Select, bindparam, select
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from network.threads.decoded import DecodedCache, DecodedThread
from network.threads.sql_tables import Tables


class _Compiled:
    """A statement compiled for one dialect: its SQL and its parameters' order."""

    def __init__(self, statement: Select[Any], dialect: Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.sql = str(compiled)
        self.order = tuple(compiled.positiontup or ())

    def arguments(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(params[name] for name in self.order)


class BulkReader:
    """A thread's messages and agent calls between two positions, read through the driver.

    On PostgreSQL the messages come back as one array (`ARRAY(SELECT ... ORDER BY seq)`, in
    the subquery's order), so reading 30,000 of them makes one list of strings rather than
    30,000 records for the garbage collector to trace. (An ordered `array_agg` would sort
    them instead of reading them in the index's order; the calls, whose rows have three
    columns, are read as rows.) SQLite has no arrays; its rows are plain tuples.
    """

    def __init__(self, tables: Tables, dialect: Dialect) -> None:
        t = tables
        self._postgres = dialect.name == "postgresql"

        def between(table: Any, *columns: Any) -> Select[Any]:
            return (
                select(*columns)
                .where(
                    table.c.thread_id == bindparam("thread"),
                    table.c.seq >= bindparam("first"),
                    table.c.seq < bindparam("end"),
                )
                .order_by(table.c.seq)
            )

        self._messages = _Compiled(between(t.messages, t.messages.c.data), dialect)
        if self._postgres:  # PostgreSQL's array constructor, which SQLAlchemy does not spell
            self._messages.sql = f"SELECT ARRAY({self._messages.sql})"
        self._results = _Compiled(
            between(t.results, t.results.c.data, t.results.c.history_length, t.results.c.at),
            dialect,
        )

    async def messages(
        self, conn: AsyncConnection, thread_id: str, first: int, end: int
    ) -> Sequence[str]:
        """The JSON texts of messages `first` to `end` (excluded), in order."""
        rows = await self._fetch(conn, self._messages, thread_id, first, end)
        if self._postgres:
            texts: Sequence[str] = rows[0][0]  # one row: the array
            return texts
        return [row[0] for row in rows]

    async def results(
        self, conn: AsyncConnection, thread_id: str, first: int, end: int
    ) -> Sequence[Sequence[Any]]:
        """The rows (JSON text, history length, time) of agent calls `first` to `end`."""
        return await self._fetch(conn, self._results, thread_id, first, end)

    async def _fetch(
        self, conn: AsyncConnection, compiled: _Compiled, thread_id: str, first: int, end: int
    ) -> Sequence[Sequence[Any]]:
        arguments = compiled.arguments({"thread": thread_id, "first": first, "end": end})
        raw = await conn.get_raw_connection()  # the transaction's connection (begun already)
        driver: Any = raw.driver_connection
        try:
            if self._postgres:
                rows: Sequence[Sequence[Any]] = await driver.fetch(compiled.sql, *arguments)
                return rows
            cursor = await driver.execute(compiled.sql, arguments)
            try:
                fetched: Sequence[Sequence[Any]] = await cursor.fetchall()
                return fetched
            finally:
                await cursor.close()
        except Exception as exc:  # the driver's own error type: the store's like any other
            raise DBAPIError(compiled.sql, None, exc) from exc


class BulkSync:
    """`SQLStore`'s reads of a thread's records into its decoded cache (a mixin over its
    tables, engine and cache), shared by its loads and its checkpoints' reads."""

    tables: Tables
    decoded: DecodedCache
    engine: AsyncEngine

    async def _sync(
        self,
        conn: AsyncConnection,
        thread_id: str,
        row: Any,
        upto: tuple[int, int, int] | None = None,
    ) -> tuple[DecodedThread, int]:
        """The thread's decoded records, after fetching and decoding only the rows committed
        since this process last read it; and how many summaries this snapshot holds.

        `upto`: read only the first (messages, calls, summaries) a reader needs (a checkpoint's,
        for `state_at`). The cache then holds that prefix of the thread, which is a prefix
        like any other: the next read fetches the rest."""
        t = self.tables
        incarnation = (row.created_at, row.rewinds or 0)
        entry: DecodedThread = self.decoded.thread(
            thread_id, incarnation, row.message_count, row.result_count
        )
        m, r, n = len(entry.messages), len(entry.results), len(entry.summaries)
        message_end, result_end, summary_end = upto or (row.message_count, row.result_count, None)
        texts: Any = ()
        if m < message_end:
            texts = await self._bulk.messages(conn, thread_id, m, message_end)
        stored: Any = ()
        if r < result_end:
            stored = await self._bulk.results(conn, thread_id, r, result_end)
        summaries: Any = ()
        wanted = (t.summaries.c.thread_id == thread_id) & (t.summaries.c.seq >= n)
        if summary_end is not None:
            wanted &= t.summaries.c.seq < summary_end
        if summary_end is None or n < summary_end:
            summaries = (
                await conn.scalars(
                    select(t.summaries.c.data).where(wanted).order_by(t.summaries.c.seq)
                )
            ).all()
        self.decoded.extend(entry, m, texts, r, stored, n, summaries)
        return entry, n + len(summaries)

    @functools.cached_property
    def _bulk(self) -> BulkReader:
        """The reads of many records (made on first use: most stores never need one)."""
        return BulkReader(self.tables, self.engine.dialect)
