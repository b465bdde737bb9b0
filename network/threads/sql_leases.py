"""Run leases on SQLite and PostgreSQL: the `run_leases` table beside an `SQLStore`'s tables.

One row per thread with a run under way: `(thread_id, holder, expires_at)`. A claim is one
atomic upsert:

    INSERT INTO run_leases VALUES (:thread, :holder, :expires)
    ON CONFLICT (thread_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
    WHERE run_leases.expires_at <= :now OR run_leases.holder = excluded.holder
    RETURNING holder

A row comes back only when the claim took the lease: no row yet, an expired one, or the
claimant's own. PostgreSQL locks the conflicting row for the update (a concurrent claim waits
for the first to commit, then sees its lease); SQLite runs it under its single write lock.
Each operation is one statement on the store's own connections (`SQLStore.statement`): on
SQLite one hand-off to a connection's thread, its commit not synced to disk (a lease lost to
a power cut only frees a thread whose run died with the machine); on PostgreSQL one round
trip. The table is its own (its name: the store's prefix + `run_leases`), created on first
use, and nothing in the thread's tables refers to it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, Double, String, Table

from network.threads.ids import check_id, check_ids
from network.threads.leases import ReadClaim, check_ttl
from network.threads.sql import SQLStore
from network.threads.sql_errors import database_errors
from network.threads.sql_new_thread import creating_parts, drop_created_sql
from network.threads.sql_tables import SideTables


class SQLLeases(SideTables):
    """The run leases of one `SQLStore` (see `network.threads.leases`)."""

    store: SQLStore

    def __init__(self, store: SQLStore) -> None:
        super().__init__(store)
        self.table = Table(
            f"{self.prefix}run_leases",
            self.metadata,
            Column("thread_id", String, primary_key=True),
            Column("holder", String, nullable=False),
            Column("expires_at", Double, nullable=False),
        )

    @functools.cached_property
    def _sql(self) -> dict[str, tuple[str, str]]:
        """Each operation's statement, for SQLite and for PostgreSQL (`?` / `$n`)."""
        name = self.store.engine.dialect.identifier_preparer.format_table(self.table)
        claim = (
            f"INSERT INTO {name} (thread_id, holder, expires_at) VALUES (?1, ?2, ?3)"
            " ON CONFLICT (thread_id) DO UPDATE SET holder = excluded.holder,"
            f" expires_at = excluded.expires_at WHERE {name}.expires_at <= ?4"
            f" OR {name}.holder = excluded.holder RETURNING holder"
        )
        renew = (
            f"UPDATE {name} SET expires_at = ?3 WHERE thread_id = ?1 AND holder = ?2"
            " RETURNING holder"
        )
        release = f"DELETE FROM {name} WHERE thread_id = ?1 AND holder = ?2"
        statements = {
            operation: (sql, sql.replace("?", "$"))
            for operation, sql in (("claim", claim), ("renew", renew), ("release", release))
        }
        # PostgreSQL: the claim, unless the thread is another app's or user's ($5, $6), in one
        # statement answering (foreign, taken, existed, leased before) and, when it took the
        # lease where there was none, the thread as a load reads it (from $7, $8, $9); SQLite
        # checks the owner and reads in the claim's transaction instead
        # (`SQLiteFast.claim_reading`).
        owned = creating = dropping = ""
        if self.dialect == "postgresql":
            owned = self._owned_claim(name)
            creating = self._owned_claim(name, creating=True)
            dropping = drop_created_sql(name, self.store._quoted())
        statements["claim_reading"] = (claim, owned)
        # a new thread created by the claim (`sql_new_thread`), and removed with the release
        statements["claim_creating"] = (claim, creating)
        statements["drop_created"] = (release, dropping)
        return statements

    def _owned_claim(self, name: str, creating: bool = False) -> str:
        """PostgreSQL's claim_reading statement (see `SQLDirect._direct_claim_reading`);
        `creating`: claim_creating's, which creates a thread it finds missing
        (`sql_new_thread`)."""
        threads = self.store.engine.dialect.identifier_preparer.format_table(
            self.store.tables.threads
        )
        load = self.store._postgres_load(first=7)
        ctes, columns = creating_parts(self.store._quoted()) if creating else ("", "")
        return (
            f"WITH t AS (SELECT app_name, user_id FROM {threads} WHERE thread_id = $1),"
            " f AS (SELECT EXISTS (SELECT 1 FROM t WHERE app_name <> $5 OR user_id <> $6) AS o),"
            f" h AS (SELECT EXISTS (SELECT 1 FROM {name} WHERE thread_id = $1) AS h),"
            f" c AS (INSERT INTO {name} (thread_id, holder, expires_at) SELECT $1, $2, $3"
            " FROM f WHERE NOT f.o ON CONFLICT (thread_id) DO UPDATE SET holder ="
            f" excluded.holder, expires_at = excluded.expires_at WHERE {name}.expires_at <= $4"
            f" OR {name}.holder = excluded.holder RETURNING holder){ctes}"
            " SELECT f.o, EXISTS (SELECT 1 FROM c), EXISTS (SELECT 1 FROM t), h.h,"
            f"{columns} x.*"
            f" FROM f CROSS JOIN h LEFT JOIN ({load}) x ON NOT h.h AND EXISTS (SELECT 1 FROM c)"
        )

    async def _run(self, operation: str, arguments: tuple[Any, ...]) -> list[Any]:
        """One statement on the store's own connections (`SQLStore.statement`), not synced to
        disk on SQLite: a lease lost to a power cut only frees a thread whose run died too."""
        sqlite, postgresql = self._sql[operation]
        return await self.store.statement(sqlite, postgresql, arguments, durable=False)

    @database_errors
    async def claim(self, thread_id: str, holder: str, ttl: float) -> bool:
        """Take the lease (see the module docstring); whether `holder` now holds it."""
        check_id("thread_id", thread_id)
        ttl = check_ttl(ttl)
        await self._setup()
        now = time.time()
        return bool(await self._run("claim", (thread_id, holder, now + ttl, now)))

    @database_errors
    async def claim_reading(
        self, thread_id: str, holder: str, ttl: float, *, app_name: str, user_id: str
    ) -> ReadClaim:
        """Claim as `claim` does, unless the thread is another app's or user's, and read the
        thread under the lease (`network.threads.leases.ReadingLeases`): one hand-off on
        SQLite, two statements on PostgreSQL."""
        check_id("thread_id", thread_id)
        check_ids(user_id=user_id, app_name=app_name)
        ttl = check_ttl(ttl)
        await self._setup()
        await self.store.setup()
        now = time.time()
        return await self.store._direct_claim_reading(
            self._sql["claim_reading"], (thread_id, holder, now + ttl, now), app_name, user_id
        )

    @database_errors
    async def claim_creating(
        self,
        thread_id: str,
        holder: str,
        ttl: float,
        *,
        app_name: str,
        user_id: str,
        messages: Sequence[Any],
        run_id: str,
    ) -> ReadClaim:
        """`claim_reading`, creating a thread it finds missing holding `messages` (of run
        `run_id`) in the same transaction (`network.threads.leases.CreatingLeases`): one
        hand-off on SQLite (not synced to disk, as the input a served run keeps), one
        statement on PostgreSQL."""
        check_id("thread_id", thread_id)
        check_ids(user_id=user_id, app_name=app_name)
        check_id("run_id", run_id)
        ttl = check_ttl(ttl)
        await self._setup()
        await self.store.setup()
        now = time.time()
        return await self.store._claim_creating(
            self._sql["claim_creating"],
            (thread_id, holder, now + ttl, now),
            app_name,
            user_id,
            messages,
            run_id,
        )

    @database_errors
    async def release_created(self, thread_id: str, holder: str, revision: int) -> bool:
        """Remove the thread `holder`'s claim created, while still at `revision`, and release
        the lease, in one transaction (`network.threads.leases.CreatingLeases`)."""
        await self._setup()
        return await self.store._direct_drop_created(
            self._sql["drop_created"], thread_id, revision, holder
        )

    @database_errors
    async def renew(self, thread_id: str, holder: str, ttl: float) -> bool:
        """Push `holder`'s lease back to `ttl` seconds from now; False when it is not theirs."""
        ttl = check_ttl(ttl)
        await self._setup()
        return bool(await self._run("renew", (thread_id, holder, time.time() + ttl)))

    @database_errors
    async def release(self, thread_id: str, holder: str) -> None:
        """Delete `holder`'s lease of `thread_id`, if it still is theirs."""
        await self._setup()
        await self._run("release", (thread_id, holder))
