"""Run leases on SQLite and PostgreSQL: the `run_leases` table beside an `SQLStore`'s tables.

One row per thread with a run under way: `(thread_id, holder, expires_at)`. A claim is one
atomic upsert:

    INSERT INTO run_leases VALUES (:thread, :holder, :expires)
    ON CONFLICT (thread_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
    WHERE run_leases.expires_at <= :now OR run_leases.holder = excluded.holder
    RETURNING holder

A row comes back only when the claim took the lease: no row yet, an expired one, or the
claimant's own. PostgreSQL locks the conflicting row for the update (a concurrent claim waits
for the first to commit, then sees its lease); SQLite runs it under its single write lock. The
table is its own (its name: the store's prefix + `run_leases`), created on first use, and
nothing in the thread's tables refers to it.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
from sqlalchemy import Column, Double, MetaData, String, Table, delete, update

from network.threads.ids import check_id
from network.threads.leases import check_ttl
from network.threads.sql import SQLStore
from network.threads.sql_errors import database_errors


class SQLLeases:
    """The run leases of one `SQLStore` (see `network.threads.leases`)."""

    def __init__(self, store: SQLStore) -> None:
        self.store = store
        self.dialect = store.dialect
        prefix = store.tables.threads.name.removesuffix("threads")
        self.metadata = MetaData()
        self.table = Table(
            f"{prefix}run_leases",
            self.metadata,
            Column("thread_id", String, primary_key=True),
            Column("holder", String, nullable=False),
            Column("expires_at", Double, nullable=False),
        )
        self._ready = False
        self._setup_lock = anyio.Lock()

    async def _setup(self) -> None:
        if self._ready:
            return
        async with self._setup_lock:
            if not self._ready:
                async with self.store._writer.begin() as conn:
                    await conn.run_sync(self.metadata.create_all)
                self._ready = True

    @database_errors
    async def claim(self, thread_id: str, holder: str, ttl: float) -> bool:
        """Take the lease (see the module docstring); whether `holder` now holds it."""
        check_id("thread_id", thread_id)
        ttl = check_ttl(ttl)
        await self._setup()
        table = self.table
        now = time.time()
        insert: Any = self.store._insert(table).values(
            thread_id=thread_id, holder=holder, expires_at=now + ttl
        )
        statement = insert.on_conflict_do_update(
            index_elements=[table.c.thread_id],
            set_={"holder": insert.excluded.holder, "expires_at": insert.excluded.expires_at},
            where=(table.c.expires_at <= now) | (table.c.holder == insert.excluded.holder),
        ).returning(table.c.holder)
        async with self.store._writer.begin() as conn:
            taken = (await conn.execute(statement)).first()
        return taken is not None

    @database_errors
    async def renew(self, thread_id: str, holder: str, ttl: float) -> bool:
        """Push `holder`'s lease back to `ttl` seconds from now; False when it is not theirs."""
        ttl = check_ttl(ttl)
        await self._setup()
        table = self.table
        statement = (
            update(table)
            .where((table.c.thread_id == thread_id) & (table.c.holder == holder))
            .values(expires_at=time.time() + ttl)
            .returning(table.c.holder)
        )
        async with self.store._writer.begin() as conn:
            renewed = (await conn.execute(statement)).first()
        return renewed is not None

    @database_errors
    async def release(self, thread_id: str, holder: str) -> None:
        """Delete `holder`'s lease of `thread_id`, if it still is theirs."""
        await self._setup()
        table = self.table
        async with self.store._writer.begin() as conn:
            await conn.execute(
                delete(table).where((table.c.thread_id == thread_id) & (table.c.holder == holder))
            )
