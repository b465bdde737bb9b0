"""The tables of the SQL thread store (SQLAlchemy Core; one definition for SQLite and Postgres).

- `threads`: one row per thread: owner, revision (the optimistic lock), times, counts. Indexed
  by owner (app, user) only: every commit changes `updated_at`, and an index holding it would
  be rewritten by every commit (a page more per commit on SQLite; no heap-only update on
  PostgreSQL) for the sake of `list_threads`, which sorts one owner's threads instead.
- `messages`: the conversation, one row per message, numbered from 0 within its thread.
- `results`: the agent calls, numbered from 0, each stored without its history plus the length
  of the conversation prefix it was sent (`history_length`, NULL when it was not a prefix).
- `summaries`: the conversation summaries context policies wrote, numbered from 0, each with
  how many messages it covers.
- `thread_state`, `user_state`, `app_state`: one row per key of each scope; keys keep their
  prefix.
- `pending`: the approvals and client tool calls the thread waits on, and their answers.
- `timeline`: the checkpoints' tables (`sql_timeline_tables`): commits, key history, lineage.

Values, messages and results are JSON text, so both databases store the same bytes.

Times are seconds since the epoch as doubles; they order and filter, never lock (the integer
revision does that).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from sqlalchemy import (
    Column,
    Double,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    text,
)

from network.threads.sql_columns import keyed_values, thread_records
from network.threads.sql_pending import pending_table
from network.threads.sql_timeline_tables import TimelineTables, build_timeline_tables


@dataclass(frozen=True, slots=True)
class Tables:
    """The store's tables, named with a common prefix."""

    metadata: MetaData
    threads: Table
    messages: Table
    results: Table
    summaries: Table
    thread_state: Table
    user_state: Table
    app_state: Table
    pending: Table  # calls the thread waits on (`network.threads.sql_pending`)
    timeline: TimelineTables

    def all(self) -> list[Table]:
        """Every table, in creation order."""
        return [
            self.threads,
            self.messages,
            self.results,
            self.summaries,
            self.thread_state,
            self.user_state,
            self.app_state,
            self.pending,
            *self.timeline.all(),
        ]


def build_tables(prefix: str = "agent_network_") -> Tables:
    """Define the tables, each name starting with `prefix`."""
    metadata = MetaData()
    return Tables(
        metadata,
        *_conversation_tables(metadata, prefix),
        *_state_tables(metadata, prefix),
        pending_table(metadata, prefix),
        build_timeline_tables(metadata, prefix),
    )


def _conversation_tables(metadata: MetaData, prefix: str) -> tuple[Table, Table, Table, Table]:
    """The threads, and their messages, call results and summaries."""
    threads = Table(
        f"{prefix}threads",
        metadata,
        Column("thread_id", String, primary_key=True),
        Column("app_name", String, nullable=False),
        Column("user_id", String, nullable=False),
        Column("revision", Integer, nullable=False),
        Column("created_at", Double, nullable=False),
        Column("updated_at", Double, nullable=False),
        Column("message_count", Integer, nullable=False),
        Column("result_count", Integer, nullable=False),
        Column("meta", Text, nullable=False),
        Index(f"{prefix}threads_by_owner", "app_name", "user_id"),
    )
    messages = thread_records(metadata, f"{prefix}messages", Column("data", Text, nullable=False))
    results = thread_records(
        metadata,
        f"{prefix}results",
        Column("agent", String, nullable=False),
        Column("at", Double, nullable=False),
        Column("history_length", Integer),
        Column("data", Text, nullable=False),
    )
    summaries = thread_records(
        metadata,
        f"{prefix}summaries",
        Column("covers", Integer, nullable=False),
        Column("data", Text, nullable=False),
    )
    return threads, messages, results, summaries


def _state_tables(metadata: MetaData, prefix: str) -> tuple[Table, Table, Table]:
    """The state of each scope: the thread's, the user's, the app's."""
    thread_state = keyed_values(metadata, f"{prefix}thread_state", "thread_id")
    user_state = keyed_values(metadata, f"{prefix}user_state", "app_name", "user_id")
    app_state = keyed_values(metadata, f"{prefix}app_state", "app_name")
    return thread_state, user_state, app_state


class SideTables:
    """Tables a feature keeps beside an `SQLStore`'s own (the run leases, the shared budgets'
    ledger): on a `MetaData` of their own, named with the store's prefix (`self.prefix`),
    nothing in the thread's tables referring to them, created on first use.

    Processes that start together take turns creating them (`create_tables`)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.dialect: str = store.dialect
        self.prefix: str = store.tables.threads.name.removesuffix("threads")
        self.metadata = MetaData()
        self._ready = False
        self._setup_lock = anyio.Lock()

    def _made(self) -> bool:
        """Whether the tables are known to exist already (a feature may remember it across
        store objects on one database)."""
        return False

    def _remember(self) -> None:
        """Called once the tables were made."""

    async def _setup(self) -> None:
        """Create the tables, once."""
        if self._ready:
            return
        async with self._setup_lock:
            if not self._ready and not self._made():
                await create_tables(self.store._writer, self.dialect, self.metadata)
                self._remember()
            self._ready = True


async def create_tables(
    writer: Any,
    dialect: str,
    metadata: MetaData,
    tables: list[Table] | None = None,
    *,
    upgrade: Callable[[Any], None] | None = None,
) -> None:
    """Create `metadata`'s tables (or those of them in `tables`) that do not exist yet, in one
    transaction of `writer`.

    Processes that start together race to create them, and PostgreSQL's catalog refuses the
    second `CREATE TABLE` of a name even with `IF NOT EXISTS` checked first: there a
    transaction-level advisory lock makes them take turns (SQLite's `BEGIN IMMEDIATE`, which
    the store's writer begins with, already does). `upgrade(connection)`: what brings tables an
    older version made up to date, in the same transaction (`upgrade_threads`)."""
    async with writer.begin() as conn:
        if dialect == "postgresql":
            lock = text("SELECT pg_advisory_xact_lock(:key)")
            names = sorted(metadata.tables) if tables is None else sorted(t.name for t in tables)
            await conn.execute(lock, {"key": _lock_key(names)})
        await conn.run_sync(metadata.create_all, tables=tables)
        if upgrade is not None:
            await conn.run_sync(upgrade)


def upgrade_threads(tables: Tables) -> Callable[[Any], None]:
    """What brings the thread tables an older version made up to date (run where they are
    created, `create_tables`): the threads' owner index, which held `updated_at` (and so was
    rewritten by every commit), replaced by one on (app, user); the calls' index on their time,
    which every commit wrote and no query read (a thread's calls after a time are picked from
    the ones the store holds decoded), dropped; so is the commits' index on their calls count
    (`commits_results`: time travel finds a call's commit by the primary key's order,
    `sql_timeline_tables`). An older SQLite database keeps its commits in a table with a
    rowid beside their key's index (a new one has a `WITHOUT ROWID` table): rewriting a
    thread's whole history on first use is not worth a page per commit."""
    threads, results = tables.threads, tables.results
    prefix = threads.name.removesuffix("threads")
    old, new_name = f"{prefix}threads_owner", f"{prefix}threads_by_owner"
    (new,) = (index for index in threads.indexes if index.name == new_name)
    unread = {
        results.name: f"{prefix}results_at",
        tables.timeline.commits.name: f"{prefix}commits_results",
    }

    def upgrade(connection: Any) -> None:
        found = inspect(connection)
        names = {index["name"] for index in found.get_indexes(threads.name)}
        if old in names:
            _drop_index(connection, old)
        if new_name not in names:
            new.create(connection)
        for table, index_name in unread.items():
            if any(index["name"] == index_name for index in found.get_indexes(table)):
                _drop_index(connection, index_name)

    return upgrade


def _drop_index(connection: Any, name: str) -> None:
    quoted = connection.dialect.identifier_preparer.quote(name)
    connection.exec_driver_sql(f"DROP INDEX {quoted}")


def _lock_key(names: list[str]) -> int:
    """The advisory lock of creating the tables `names`: a stable 64-bit number."""
    digest = hashlib.sha256(f"agent_network tables {' '.join(names)}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
