"""`SQLStore`: threads in SQLite (the embedded default) or PostgreSQL, one code path for both.

Built on SQLAlchemy 2's async Core with aiosqlite and asyncpg; importing this module is what
loads SQLAlchemy, so `import network` never pays for it. What every run does (its load, its
commits, the run leases) goes to the drivers directly instead, on the store's own connections
(`sql_direct`): one hand-off to a database thread per transaction on SQLite, one statement per
load or commit on PostgreSQL, where SQLAlchemy's per-statement work and aiosqlite's hand-off per
cursor call cost several times the database's own work.

How the guarantees are kept:

- A commit is one transaction: check the thread's integer revision (a mismatch is
  `StaleThreadError`), append messages and results, upsert or delete thread keys, re-apply the
  `user:` / `app:` writes to the stored values, bump the revision. Any failure rolls it all back.
  (On PostgreSQL the common commit is one statement: atomic on its own.)
- Serializing writers. PostgreSQL: the thread's row is read `FOR UPDATE`, and so is each
  shared key's row before its writes are re-applied (keys taken in sorted order, so two commits
  never wait on each other crosswise). SQLite: every write transaction starts with
  `BEGIN IMMEDIATE`, which takes the database's single write lock up front (other writers wait
  up to `busy_timeout`), so a read-then-write inside it cannot be overtaken.
- Consistent reads: a thread and its parts are read in one transaction (a deferred `BEGIN` on
  SQLite's WAL snapshot; on PostgreSQL one statement, or `REPEATABLE READ` for several).
- Flat reads: records never change once committed, so the rows read are kept per thread
  (`network.threads.decoded`, shared by the stores this process opens on one database) and a
  read fetches only the rows committed since, by sequence number. Rows are decoded a page at a
  time when first read, so even a cold load decodes only what the run reads (the newest
  turns); it does fetch the text of every row once. The latest thread state is its own table
  (a snapshot, one row per key) beside the per-call deltas, so it is never replayed.
- SQLite runs in WAL mode (readers never block the writer), with `synchronous=FULL` by
  default so that a committed agent call survives a power cut as well as a `kill -9`; pass
  `sqlite_synchronous="NORMAL"` to trade that for speed (it still survives a process crash).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import anyio
from sqlalchemy import delete, event, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from network.errors import ConfigurationError
from network.history.messages import Message
from network.history.results import InferenceResult
from network.numbers import check_number
from network.threads.codec import encode_message, encode_result, encode_summary
from network.threads.decoded import DecodedCache, check_window, shared_cache
from network.threads.ids import check_id, check_ids
from network.threads.leases import ReadClaim
from network.threads.protocol import BaseStore
from network.threads.sql_commit import CommitWriter
from network.threads.sql_direct import SQLDirect
from network.threads.sql_errors import database_errors
from network.threads.sql_fast import Encoded
from network.threads.sql_links import (
    skip_lost_connections,
    switch_to_wal,
)
from network.threads.sql_tables import build_tables, create_tables, upgrade_threads
from network.threads.sql_timeline import SQLTimeTravel
from network.threads.thread_data import (
    ANONYMOUS_USER,
    Commit,
    Thread,
    ThreadInfo,
    new_thread_info,
)
from network.threads.urls import check_driver, shown_url, store_url

_BEGIN_OPTION = "agent_network_begin"


class SQLStore(SQLDirect, SQLTimeTravel, BaseStore):
    """Threads in a SQL database: `SQLStore("agent-network.db")` (an SQLite file),
    `SQLStore("sqlite+aiosqlite:///path.db")` or `SQLStore("postgresql+asyncpg://user:pw@host/db")`.

    Tables are created on first use (`create_tables=False` to manage them yourself); their
    names start with `table_prefix`. `cache` is where the rows read are kept and decoded on
    first read (default: the cache this process shares between the stores it opens on the
    same database; pass a fresh `DecodedCache()` to start cold). Extra keyword arguments go to
    SQLAlchemy's `create_async_engine` (pool size, echo, ...). Use it as
    `async with SQLStore(...) as store` or call `close()`, which disposes of the engine's
    connections.

    It keeps checkpoints: `checkpoints`, `state_at`, `fork_thread`, `rewind_thread` (see
    `network.threads.checkpoint_store`).
    """

    def __init__(
        self,
        url: str,
        *,
        table_prefix: str = "agent_network_",
        create_tables: bool = True,
        sqlite_synchronous: str = "FULL",
        busy_timeout: float = 30.0,
        cache: DecodedCache | None = None,
        **engine_options: Any,
    ) -> None:
        check_number("SQLStore: busy_timeout (seconds)", busy_timeout)
        _check_kinds(table_prefix, create_tables, cache)
        self.url = store_url(url)
        try:
            parsed = make_url(self.url)
        except (ValueError, ArgumentError):  # `[::1` for a host: int() of a port
            raise ConfigurationError(
                f"store {shown_url(self.url)!r} is not a database URL"
            ) from None
        self.dialect = parsed.get_backend_name()
        if self.dialect == "sqlite" and (
            parsed.database in (None, "", ":memory:") or "memory" in str(parsed.query)
        ):
            raise ConfigurationError(
                "an in-memory SQLite database cannot be shared by the store's connections; "
                "use network.threads.MemoryStore for a store in memory"
            )
        if self.dialect not in ("sqlite", "postgresql"):
            raise ConfigurationError(
                f"SQLStore supports SQLite and PostgreSQL, not {self.dialect!r} "
                f"({shown_url(self.url)})"
            )
        check_driver(self.url, shown_url(self.url))
        self.engine = create_async_engine(self.url, **engine_options)
        self.tables = build_tables(table_prefix)
        self._synchronous = sqlite_synchronous
        self._busy_timeout = busy_timeout
        self._link_size = int(engine_options.get("pool_size", 5)) + int(
            engine_options.get("max_overflow", 10)
        )
        self._connect_args: dict[str, Any] = dict(engine_options.get("connect_args") or {})
        self._link = None
        if self.dialect == "sqlite":
            _configure_sqlite(self.engine.sync_engine, sqlite_synchronous, busy_timeout)
            self._writer = self.engine.execution_options(**{_BEGIN_OPTION: "BEGIN IMMEDIATE"})
            self._reader = self.engine
            # the dialect the URL names, and only it, is imported
            from sqlalchemy.dialects.sqlite import insert  # noqa: PLC0415
        else:
            skip_lost_connections(self.engine.sync_engine)
            self._writer = self.engine
            self._reader = self.engine.execution_options(isolation_level="REPEATABLE READ")
            from sqlalchemy.dialects.postgresql import insert  # type: ignore[assignment]  # noqa: PLC0415
        self._insert = insert
        self.decoded = shared_cache(self.url, table_prefix) if cache is None else cache
        self._commits = CommitWriter(self.tables, insert, self.dialect)
        self._create_tables = create_tables
        self._ready = not create_tables
        self._setup_lock = anyio.Lock()

    def __repr__(self) -> str:
        """The store's URL, its password as `***` (a repr is printed and logged)."""
        return f"SQLStore({shown_url(self.url)!r})"

    @property
    def writer(self) -> AsyncEngine:
        """The store's engine as its own writers use it: on SQLite every transaction starts
        with `BEGIN IMMEDIATE` (the write lock taken up front, waited for up to
        `busy_timeout`); on PostgreSQL the engine itself. Tables kept beside the store's on
        its database write through it: a transaction that reads then writes on a deferred
        `BEGIN` would fail at once with "database is locked" when another connection
        writes in between."""
        return self._writer

    # -- setup ---------------------------------------------------------------------------------

    @database_errors
    async def setup(self) -> None:
        """Create the tables if they do not exist (done on first use unless disabled)."""
        if self._ready:
            return
        async with self._setup_lock:
            if self._ready:
                return
            await create_tables(
                self._writer,
                self.dialect,
                self.tables.metadata,
                upgrade=upgrade_threads(self.tables),
            )
            self._ready = True

    async def close(self) -> None:
        """Close every pooled connection."""
        await self._close_link()
        await self.engine.dispose()

    # -- threads -------------------------------------------------------------------------------

    @database_errors
    async def _create_thread(self, info: ThreadInfo) -> None:
        await self.setup()
        await self._direct_create(_row_of(info))

    @database_errors
    async def create_and_get(
        self,
        thread_id: str,
        *,
        app_name: str,
        user_id: str = ANONYMOUS_USER,
        messages: Sequence[Message] = (),
        run_id: str | None = None,
    ) -> Thread | None:
        """`create_thread` then `get_thread`, in one transaction on SQLite and one statement on
        PostgreSQL (a served run's session opening a thread it found missing under its lease;
        `network.threads.thread_load`). `messages` (of run `run_id`: a served run's input,
        `ThreadSession.keep_input`) are the new thread's first commit, made in the same
        transaction: the thread is created holding them at revision 1, or not at all.

        On SQLite none of it is synced to disk on its own (as `keep_input`'s commit): it
        survives the process at once, a power cut with the thread's first synced commit (its
        first agent call's)."""
        check_id("thread_id", thread_id)
        if run_id is not None:
            check_id("run_id", run_id)
        info = new_thread_info(thread_id, app_name=app_name, user_id=user_id, metadata=None)
        await self.setup()
        first = None
        if messages:
            commit = Commit(revision=0, run_id=run_id, messages=list(messages), synced=False)
            first = self._encoded(thread_id, commit)
        return await self._direct_create_reading(_row_of(info), first)

    async def _claim_creating(
        self,
        claim: tuple[str, str],
        arguments: tuple[Any, ...],
        app_name: str,
        user_id: str,
        messages: Sequence[Message],
        run_id: str,
    ) -> ReadClaim:
        """A run lease's claim that creates the thread when missing, holding `messages` as its
        first commit, as `create_and_get` would (`SQLLeases.claim_creating`)."""
        thread_id = arguments[0]
        info = new_thread_info(thread_id, app_name=app_name, user_id=user_id, metadata=None)
        commit = Commit(revision=0, run_id=run_id, messages=list(messages), synced=False)
        first = self._encoded(thread_id, commit)
        return await self._direct_claim_creating(
            claim, arguments, app_name, user_id, _row_of(info), first
        )

    @database_errors
    async def get_thread(self, thread_id: str) -> Thread | None:
        check_id("thread_id", thread_id)
        await self.setup()
        return await self._direct_load(thread_id)

    @database_errors
    async def list_threads(
        self, *, app_name: str | None = None, user_id: str | None = None
    ) -> list[ThreadInfo]:
        check_ids(user_id=user_id, app_name=app_name)
        await self.setup()
        threads = self.tables.threads
        query = select(threads).order_by(threads.c.updated_at.desc(), threads.c.thread_id)
        if app_name is not None:
            query = query.where(threads.c.app_name == app_name)
        if user_id is not None:
            query = query.where(threads.c.user_id == user_id)
        async with self._reader.begin() as conn:
            rows = (await conn.execute(query)).all()
        return [_info(row) for row in rows]

    @database_errors
    async def delete_thread(self, thread_id: str) -> bool:
        check_id("thread_id", thread_id)
        await self.setup()
        t = self.tables
        async with self._writer.begin() as conn:
            for table in (
                t.messages,
                t.results,
                t.summaries,
                t.thread_state,
                t.pending,
                *t.timeline.all(),
            ):
                await conn.execute(delete(table).where(table.c.thread_id == thread_id))
            gone = await conn.execute(
                delete(t.threads)
                .where(t.threads.c.thread_id == thread_id)
                .returning(t.threads.c.thread_id)
            )
            existed = gone.first() is not None
        self.decoded.forget(thread_id)
        return existed

    @database_errors
    async def delete_user_state(self, user_id: str, *, app_name: str | None = None) -> int:
        """Delete every `user:` key of `user_id` (in `app_name`, or in every app); how many."""
        check_id("user_id", user_id, allow_empty=True)
        check_ids(app_name=app_name)
        await self.setup()
        table = self.tables.user_state
        query = delete(table).where(table.c.user_id == user_id)
        if app_name is not None:
            query = query.where(table.c.app_name == app_name)
        async with self._writer.begin() as conn:
            gone = await conn.execute(query.returning(table.c.key))
            return len(gone.all())

    @database_errors
    async def get_results(
        self, thread_id: str, *, last: int | None = None, after: float | None = None
    ) -> list[InferenceResult] | None:
        check_window(last, after)
        async with self._reading(thread_id) as (conn, row):
            if row is None:
                return None
            entry, _ = await self._sync(conn, thread_id, row)
        return entry.select(row.result_count, last, after)

    # -- commits -------------------------------------------------------------------------------

    @database_errors
    async def append_results(self, thread_id: str, commit: Commit) -> int:
        check_id("thread_id", thread_id)
        await self.setup()
        encoded = self._encoded(thread_id, commit)
        done = await self._direct_commit(encoded)
        revision, *first = done if done is not None else await self._write(encoded)
        # Committed: the next load need not read back what this process just wrote.
        entry = self.decoded.entry(thread_id)
        if entry is not None:
            rows = [(r["data"], r["history_length"], r["at"]) for r in encoded.results]
            texts = [text for _, text in encoded.summaries]
            self.decoded.extend(entry, first[0], encoded.messages, first[1], rows, first[2], texts)
        return revision

    @staticmethod
    def _encoded(thread_id: str, commit: Commit) -> Encoded:
        """`commit` with its records encoded (before the transaction: the write lock is held
        only for the writes)."""
        now = time.time()
        messages = [encode_message(message) for message in commit.messages]
        results = [
            {
                "agent": record.result.agent,
                "at": record.result.started_at or now,
                "history_length": record.history_length,
                "data": encode_result(record),
            }
            for record in commit.results
        ]
        summaries = [(summary.covers, encode_summary(summary)) for summary in commit.summaries]
        return Encoded(thread_id, commit, messages, results, summaries, now)

    async def _write(self, encoded: Encoded) -> tuple[int, int, int, int]:
        """A commit through SQLAlchemy (`CommitWriter`): one transaction of several statements,
        for what the direct paths leave to it (see `sql_fast_sqlite`, `sql_fast_postgres`)."""
        commit = encoded.commit
        async with self._writer.begin() as conn:  # any failure rolls the whole commit back
            if commit.append_only:
                commit = await self._commits.appending(conn, encoded.thread_id, commit)
            first = await self._commits.write(
                conn,
                encoded.thread_id,
                commit,
                encoded.messages,
                encoded.results,
                encoded.now,
                encoded.summaries,
            )
        return (commit.revision + 1, *first)


def _row_of(info: ThreadInfo) -> list[Any]:
    """A new thread's row, as the direct paths insert it."""
    return [
        info.thread_id,
        info.app_name,
        info.user_id,
        info.revision,
        info.created_at,
        info.updated_at,
        info.message_count,
        info.result_count,
        json.dumps(info.metadata),
    ]


def _info(row: Any) -> ThreadInfo:
    values = dict(row._mapping)
    values.pop("rewinds", None)  # the lineage table's, joined to check cached records
    values["metadata"] = json.loads(values.pop("meta"))
    return ThreadInfo.model_construct(**values)


def _configure_sqlite(sync_engine: Any, synchronous: str, busy_timeout: float) -> None:
    """WAL mode, durability and lock waits on every connection; our own BEGIN statements."""
    if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise ConfigurationError("sqlite_synchronous must be OFF, NORMAL, FULL or EXTRA")

    @event.listens_for(sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # The driver's own transaction handling would start transactions late (at the first
        # write) and never take the write lock up front; we emit BEGIN ourselves instead.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        switch_to_wal(cursor, busy_timeout)
        cursor.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        cursor.close()

    @event.listens_for(sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql(connection.get_execution_options().get(_BEGIN_OPTION, "BEGIN"))


def _check_kinds(table_prefix: Any, create_tables: Any, cache: Any) -> None:
    """Options of the wrong kind, refused when the store is made: a `cache` that is no
    `DecodedCache` failed the first run with an AttributeError, and `create_tables="no"`
    created the tables (a true string)."""
    if not isinstance(table_prefix, str):
        raise ConfigurationError(f"SQLStore: table_prefix must be a string, got {table_prefix!r}")
    if not isinstance(create_tables, bool):
        raise ConfigurationError(
            f"SQLStore: create_tables must be True or False, got {create_tables!r}"
        )
    if cache is not None and not isinstance(cache, DecodedCache):
        raise ConfigurationError(
            "SQLStore: cache must be a network.threads.DecodedCache (or None: the process's "
            f"shared cache), got {cache!r}"
        )
