"""The pending calls of a thread in SQL: one table, its claims and its inserts.

`{prefix}pending` holds one row per call a run stopped on (`network.threads.pending`), numbered
within its thread; `answer` is NULL while the call waits, then the answer's JSON text, with the
run that answered it. A claim is one `UPDATE ... WHERE answer IS NULL` per call, inside the
commit's transaction and before its revision check: on PostgreSQL a second claim of the same
row waits for the first transaction's row lock and then finds the row answered; on SQLite the
transaction holds the database's write lock from its `BEGIN IMMEDIATE`. Either way exactly one
claim of a call commits.
"""

from __future__ import annotations

from typing import Any

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
from network.threads.pending import PendingCall
from network.threads.pending_claims import check_claims
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
        self.states = select(c.item_id, c.answer.is_(None), c.answered_by).where(
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
            pending: dict[str, object] = {}
            answered_by: dict[str, str | None] = {}
            for item_id, waiting, by in rows.all():
                if waiting:
                    pending[item_id] = True
                else:
                    answered_by[item_id] = by
            check_claims(thread_id, {key: "" for key in failed}, answered_by, pending)
            raise ThreadError(f"thread {thread_id!r}: a claim failed")  # unreachable

    async def add_all(self, conn: AsyncConnection, thread_id: str, commit: Commit) -> None:
        """Insert the calls the commit stopped on."""
        first = await conn.scalar(self.next_seq, {"b_thread": thread_id})
        rows = [
            {
                "thread_id": thread_id,
                "seq": first + i,
                "item_id": entry.id,
                "run_id": entry.run_id,
                "data": entry.to_text(),
            }
            for i, entry in enumerate(commit.pending)
        ]
        await conn.execute(self.add, rows)


def decode_waiting(rows: dict[str, str]) -> list[PendingCall]:
    """The waiting calls read with the thread's state (`{seq: text}`), in the order stored."""
    return [PendingCall.from_text(rows[seq]) for seq in sorted(rows, key=int)]
