"""The pending calls of a thread in SQL: one table, its claims and its inserts.

`{prefix}pending` holds one row per call a run stopped on (`network.threads.pending`), numbered
within its thread; `answer` is NULL while the call waits, then the answer's JSON text, with the
run that answered it. A claim is one `UPDATE ... WHERE answer IS NULL` per call, inside the
commit's transaction and before its revision check: on PostgreSQL a second claim of the same
row waits for the first transaction's row lock and then finds the row answered; on SQLite the
transaction holds the database's write lock from its `BEGIN IMMEDIATE`. Either way exactly one
claim of a call commits.

Time travel (inside the fork's or rewind's transaction): a fork inserts the source's waiting
rows of the checkpoints up to its own; a rewind marks the waiting rows of the calls it removes
answered, with a withdrawal as the answer and no run (`network.threads.pending_claims`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    cast,
    func,
    literal,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from network.errors import ThreadError
from network.threads.pending import PendingCall, stored_revision
from network.threads.pending_claims import check_claims, withdrawal, withdrawn_reason
from network.threads.thread_data import Commit


def pending_table(metadata: MetaData, prefix: str) -> Table:
    """The table of pending (and answered) calls."""
    return Table(
        f"{prefix}pending",
        metadata,
        Column("thread_id", String, primary_key=True),
        Column("seq", Integer, primary_key=True),
        Column("item_id", String, nullable=False),
        Column("run_id", String),
        Column("data", Text, nullable=False),
        Column("answer", Text),  # NULL while the call waits
        Column("answered_by", String),
    )


def refuse_claims(thread_id: str, failed: list[str], rows: Iterable[Sequence[Any]]) -> NoReturn:
    """Raise what the claims of `failed` calls met, from their rows' `(item_id, waiting,
    answered_by, answer)` (`PendingStatements.states`): answered already, withdrawn, or not
    waited on (`network.threads.pending_claims.check_claims`)."""
    pending: dict[str, object] = {}
    answered_by: dict[str, str | None] = {}
    withdrawn: dict[str, str] = {}
    for item_id, waiting, by, answer in rows:
        if waiting:
            pending[item_id] = True
            continue
        answered_by[item_id] = by
        reason = withdrawn_reason(answer)
        if reason is not None:
            withdrawn[item_id] = reason
    check_claims(thread_id, dict.fromkeys(failed, ""), answered_by, pending, withdrawn)
    raise ThreadError(f"thread {thread_id!r}: a claim failed")  # check_claims raised


class PendingStatements:
    """The statements on the pending table, built once per store."""

    def __init__(self, table: Table) -> None:
        self.table = table
        c = table.c
        self.claim = (
            update(table)
            .where(
                (c.thread_id == bindparam("b_thread"))
                & (c.item_id == bindparam("b_item"))
                & c.answer.is_(None)
            )
            .values(answer=bindparam("b_answer"), answered_by=bindparam("b_run"))
            .returning(c.seq)
        )
        self.states = select(c.item_id, c.answer.is_(None), c.answered_by, c.answer).where(
            (c.thread_id == bindparam("b_thread"))
            & c.item_id.in_(bindparam("b_items", expanding=True))
        )
        self.next_seq = select(func.coalesce(func.max(c.seq) + 1, 0)).where(
            c.thread_id == bindparam("b_thread")
        )
        self.add = table.insert()

    def waiting(self, thread_id: str) -> Any:
        """A `(scope, key, value)` select of the thread's waiting calls (key: the row's number),
        to join the thread's state read in one round trip."""
        c = self.table.c
        return select(literal(3).label("scope"), cast(c.seq, String), c.data).where(
            (c.thread_id == thread_id) & c.answer.is_(None)
        )

    async def waiting_now(self, conn: AsyncConnection, thread_id: str) -> list[PendingCall]:
        """The calls the thread waits on, in the order stored."""
        c = self.table.c
        rows = await conn.execute(
            select(c.data).where((c.thread_id == thread_id) & c.answer.is_(None)).order_by(c.seq)
        )
        return [PendingCall.from_text(data) for (data,) in rows.all()]

    async def claim_all(self, conn: AsyncConnection, thread_id: str, commit: Commit) -> None:
        """Mark every call `commit.answered` claims answered, or raise (nothing claimed)."""
        failed = []
        for item_id, answer in commit.answered.items():
            params = {"b_thread": thread_id, "b_item": item_id, "b_answer": answer}
            claimed = await conn.execute(self.claim, {**params, "b_run": commit.run_id})
            if claimed.first() is None:
                failed.append(item_id)
        if failed:  # the caller's transaction rolls back the claims that did succeed
            rows = await conn.execute(self.states, {"b_thread": thread_id, "b_items": failed})
            refuse_claims(thread_id, failed, rows.all())

    async def add_all(self, conn: AsyncConnection, thread_id: str, commit: Commit) -> None:
        """Insert the calls the commit stopped on."""
        first = await conn.scalar(self.next_seq, {"b_thread": thread_id})
        rows = [
            {
                "thread_id": thread_id,
                "seq": first + i,
                "item_id": entry.id,
                "run_id": entry.run_id,
                "data": entry.to_text(commit.revision + 1),
            }
            for i, entry in enumerate(commit.pending)
        ]
        await conn.execute(self.add, rows)

    async def _waiting_rows(
        self, conn: AsyncConnection, thread_id: str, current: int
    ) -> list[tuple[Any, int]]:
        """The thread's waiting rows, each with the revision of the commit that stored it."""
        c = self.table.c
        rows = await conn.execute(
            select(self.table).where((c.thread_id == thread_id) & c.answer.is_(None))
        )
        return [(row, stored_revision(row.data, current)) for row in rows.all()]

    async def copy_waiting(
        self, conn: AsyncConnection, source: str, target: str, revision: int, current: int
    ) -> None:
        """Give the fork `target` the calls `source` (now at `current`) waits on that its
        commits up to `revision` stored."""
        rows = [
            {**row._mapping, "thread_id": target}
            for row, stored in await self._waiting_rows(conn, source, current)
            if stored <= revision
        ]
        if rows:
            await conn.execute(self.add, rows)

    async def withdraw_after(
        self,
        conn: AsyncConnection,
        thread_id: str,
        revisions: tuple[int, int],
        checkpoint: int,
        kept_as: str,
    ) -> list[str]:
        """Withdraw the calls the thread waits on that a commit after `revisions[0]` stored
        (the thread is at `revisions[1]`; a rewind to `checkpoint`, keeping the thread as
        `kept_as`); their ids."""
        revision, current = revisions
        gone = [
            row
            for row, stored in await self._waiting_rows(conn, thread_id, current)
            if stored > revision
        ]
        if gone:
            c = self.table.c
            await conn.execute(
                update(self.table)
                .where((c.thread_id == thread_id) & c.seq.in_([row.seq for row in gone]))
                .values(answer=withdrawal(checkpoint, kept_as), answered_by=None)
            )
        return [row.item_id for row in sorted(gone, key=lambda row: row.seq)]


def decode_waiting(rows: dict[str, str]) -> list[PendingCall]:
    """The waiting calls read with the thread's state (`{seq: text}`), in the order stored."""
    return [PendingCall.from_text(rows[seq]) for seq in sorted(rows, key=int)]
