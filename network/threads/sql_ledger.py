"""Shared budgets' ledger on SQLite and PostgreSQL: two tables beside an `SQLStore`'s own.

- `budgets`: one row per key: what it spent (`tokens`, `cost_usd`, `requests`), what the
  requests under way hold (`held_*`), and its per-minute window (`window_start`,
  `window_requests`);
- `budget_holds`: one row per request under way: its hold and when it is reclaimed.

A reservation is one conditional statement, the decision itself:

    UPDATE budgets SET held_tokens = held_tokens + :tokens, ..., window_requests = ...
    WHERE key = :key AND tokens + held_tokens + :tokens <= :max_tokens AND ...

PostgreSQL locks the row for the update, and a concurrent reservation re-reads it after the
first commits (READ COMMITTED re-checks the condition on the row's newest version); SQLite
runs it under its single write lock (`BEGIN IMMEDIATE`). So two processes never both take
the last room. In the same transaction the hold's row is written. A statement that matched
no row either found no row yet (the key's first request: it is made, and the statement
runs again), or a cap that refuses: expired holds are reclaimed (as spent) and it runs once
more, then the row read says which cap refused. A budget that caps no total never refuses for
what is held, so its reservation reclaims first; and a read of the figures that finds an
expired hold reclaims it (in a write transaction of its own) before it answers.

A settlement deletes the hold's row (`RETURNING` what it held) and moves the figures in one
transaction; when the row is gone (reclaimed as spent while its request was still under way)
it adds only what the request spent beyond the hold, which the reclaim counted already.
Beside the caps, the condition keeps a key's figures under the ledger's ceilings (`LEDGER_TOKENS`,
`LEDGER_COST_USD`), and what a settlement or a reclaim adds stops at them (`_plus`, a `CASE`):
no statement of the ledger can pass what a BIGINT holds, nor make a figure NaN. The tables
are created on first use (their names: the store's prefix + `budgets`, + `budget_holds`).
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Double,
    Index,
    Integer,
    String,
    Table,
    case,
    delete,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from network.run.budgets.ledger import (
    LEDGER_COST_USD,
    LEDGER_TOKENS,
    WINDOW,
    BudgetFigures,
    Caps,
    Hold,
    Refusal,
    beyond_reclaimed,
    refusal,
)
from network.threads.sql import SQLStore
from network.threads.sql_errors import database_errors
from network.threads.sql_tables import SideTables

_ATTEMPTS = 4  # a reservation's statement runs again after making the row, or reclaiming
_CREATED: set[tuple[str, str]] = set()  # (database URL, table) whose tables this process made


class SQLLedger(SideTables):
    """The shared budgets of one `SQLStore`'s database (see the module docstring)."""

    store: SQLStore

    def __init__(self, store: SQLStore) -> None:
        super().__init__(store)
        prefix = self.prefix
        self.budgets = Table(
            f"{prefix}budgets",
            self.metadata,
            Column("key", String, primary_key=True),
            Column("tokens", BigInteger, nullable=False, default=0),
            Column("cost_usd", Double, nullable=False, default=0.0),
            Column("requests", BigInteger, nullable=False, default=0),
            Column("held_tokens", BigInteger, nullable=False, default=0),
            Column("held_cost_usd", Double, nullable=False, default=0.0),
            Column("held_requests", Integer, nullable=False, default=0),
            Column("window_start", Double, nullable=False, default=0.0),
            Column("window_requests", Integer, nullable=False, default=0),
        )
        self.holds = Table(
            f"{prefix}budget_holds",
            self.metadata,
            Column("id", String, primary_key=True),
            Column("key", String, nullable=False),
            Column("tokens", BigInteger, nullable=False),
            Column("cost_usd", Double, nullable=False),
            Column("expires_at", Double, nullable=False),
            Index(f"{prefix}budget_holds_by_key", "key", "expires_at"),
        )

    def _made(self) -> bool:
        """Made by this process already: budgets open a store per run when named by a URL."""
        return (self.store.url, self.budgets.name) in _CREATED

    def _remember(self) -> None:
        _CREATED.add((self.store.url, self.budgets.name))

    @database_errors
    async def reserve(self, key: str, hold: Hold, caps: Caps, now: float) -> Refusal | None:
        """Hold `hold` on `key` if it fits under `caps` (see the module docstring)."""
        await self._setup()
        table, take = self.budgets, self._taking(key, hold, caps, now)
        reclaimed = False
        async with self.store._writer.begin() as conn:
            if not caps.bounded:  # never refused for what is held: reclaim first, every time
                reclaimed = True
                await self._reclaim(conn, key, now)
            for _ in range(_ATTEMPTS):
                if (await conn.execute(take)).rowcount == 1:
                    await conn.execute(
                        self.holds.insert().values(
                            id=hold.id,
                            key=key,
                            tokens=hold.tokens,
                            cost_usd=hold.cost_usd,
                            expires_at=hold.expires_at,
                        )
                    )
                    return None
                row = (await conn.execute(select(table).where(table.c.key == key))).first()
                if row is None:
                    insert: Any = self.store._insert(table)
                    await conn.execute(
                        insert.values(key=key).on_conflict_do_nothing(index_elements=["key"])
                    )
                    continue
                if not reclaimed:
                    reclaimed = True
                    if await self._reclaim(conn, key, now):
                        continue
                refused = refusal(_figures(row), hold, caps, now)
                if refused is not None:
                    return refused
            # the row changed under us every time (others settling): refused, as full
            return refusal(_figures(row), hold, caps, now) or Refusal(
                "max_tokens" if caps.max_tokens is not None else "max_requests",
                float(caps.max_tokens or caps.max_requests or 0),
                0,
                0,
                hold.tokens,
            )

    def _taking(self, key: str, hold: Hold, caps: Caps, now: float) -> Any:
        """The statement that holds `hold` on `key`'s row only if it fits under `caps` (one
        row changed: held; none: it did not fit, or there is no row yet)."""
        table = self.budgets
        opens = table.c.window_start <= now - WINDOW
        # past the ceiling it is refused below; bound no larger (SQLite's integers end at 2**63)
        tokens = min(hold.tokens, LEDGER_TOKENS + 1)
        fits = [table.c.key == key]
        if caps.requests_per_minute is not None:
            fits.append(opens | (table.c.window_requests < caps.requests_per_minute))
        if caps.max_requests is not None:
            fits.append(table.c.requests + table.c.held_requests + 1 <= caps.max_requests)
        if caps.max_tokens is not None:
            fits.append(table.c.tokens + table.c.held_tokens + tokens <= caps.max_tokens)
        if caps.max_cost_usd is not None:
            fits.append(
                table.c.cost_usd + table.c.held_cost_usd + hold.cost_usd <= caps.max_cost_usd
            )
        fits.append(table.c.tokens + table.c.held_tokens + tokens <= LEDGER_TOKENS)
        # a NaN or infinite hold cost (bound as NULL by SQLite) matches no row: refused
        fits.append(table.c.cost_usd + table.c.held_cost_usd + hold.cost_usd <= LEDGER_COST_USD)
        return (
            update(table)
            .where(*fits)
            .values(
                held_tokens=table.c.held_tokens + tokens,
                held_cost_usd=table.c.held_cost_usd + hold.cost_usd,
                held_requests=table.c.held_requests + 1,
                window_start=case((opens, now), else_=table.c.window_start),
                window_requests=case((opens, 1), else_=table.c.window_requests + 1),
            )
        )

    @database_errors
    async def settle(
        self, key: str, hold: Hold, tokens: int, cost_usd: float, requests: int, now: float
    ) -> None:
        """Drop `hold` and count what its request spent; one reclaimed already (counted as
        spent) counts only what was spent beyond it."""
        await self._setup()
        holds, table = self.holds, self.budgets
        async with self.store._writer.begin() as conn:
            gone = (
                await conn.execute(
                    delete(holds)
                    .where(holds.c.id == hold.id)
                    .returning(holds.c.tokens, holds.c.cost_usd)
                )
            ).first()
            if gone is None:  # reclaimed (in this transaction's view): it was counted
                tokens, cost_usd, requests = beyond_reclaimed(hold, tokens, cost_usd, requests)
            values: dict[str, Any] = {
                "tokens": _plus(table.c.tokens, tokens, LEDGER_TOKENS),
                "cost_usd": _plus(table.c.cost_usd, cost_usd, LEDGER_COST_USD),
                "requests": table.c.requests + requests,
            }
            if gone is not None:
                values["held_tokens"] = table.c.held_tokens - gone.tokens
                values["held_cost_usd"] = table.c.held_cost_usd - gone.cost_usd
                values["held_requests"] = table.c.held_requests - 1
            await conn.execute(update(table).where(table.c.key == key).values(**values))

    @database_errors
    async def figures(self, key: str, now: float | None = None) -> BudgetFigures:
        """What `key` spent and holds now (zeros for a key never used), its expired holds
        reclaimed first: a read writes only when one has expired, once."""
        await self._setup()
        table, holds = self.budgets, self.holds
        now = time.time() if now is None else now
        row_of = select(table).where(table.c.key == key)
        expired = select(holds.c.id).where((holds.c.key == key) & (holds.c.expires_at <= now))
        async with self.store.engine.connect() as conn:
            row = (await conn.execute(row_of)).first()
            stale = row is not None and (await conn.execute(expired.limit(1))).first()
        if stale:
            async with self.store._writer.begin() as conn:
                await self._reclaim(conn, key, now)
                row = (await conn.execute(row_of)).first()
        return BudgetFigures() if row is None else _figures(row)

    async def _reclaim(self, conn: AsyncConnection, key: str, now: float) -> bool:
        """Holds of `key` past their time, counted as spent; whether there were any."""
        holds, table = self.holds, self.budgets
        expired = (
            await conn.execute(
                delete(holds)
                .where((holds.c.key == key) & (holds.c.expires_at <= now))
                .returning(holds.c.tokens, holds.c.cost_usd)
            )
        ).all()
        if not expired:
            return False
        tokens = sum(int(row.tokens) for row in expired)
        cost = sum(float(row.cost_usd) for row in expired)
        count = len(expired)
        await conn.execute(
            update(table)
            .where(table.c.key == key)
            .values(
                held_tokens=table.c.held_tokens - tokens,
                held_cost_usd=table.c.held_cost_usd - cost,
                held_requests=table.c.held_requests - count,
                tokens=_plus(table.c.tokens, tokens, LEDGER_TOKENS),
                cost_usd=_plus(table.c.cost_usd, cost, LEDGER_COST_USD),
                requests=table.c.requests + count,
            )
        )
        return True


def _plus(column: Any, amount: float, ceiling: float) -> Any:
    """`column + amount` stopping at `ceiling` (`amount` >= 0: spent; one not finite, or
    past the ceiling, counts as the ceiling), never past what the column holds."""
    if not amount <= ceiling:
        amount = ceiling
    return case((column > ceiling - amount, ceiling), else_=column + amount)


def _figures(row: Any) -> BudgetFigures:
    return BudgetFigures(
        int(row.tokens),
        float(row.cost_usd),
        int(row.requests),
        int(row.held_tokens),
        float(row.held_cost_usd),
        int(row.held_requests),
        float(row.window_start),
        int(row.window_requests),
    )
