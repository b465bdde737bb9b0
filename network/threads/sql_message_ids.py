"""The ids of appended messages checked in SQL, inside the commit's transaction.

`network.threads.message_ids` says why and what is compared. Messages are JSON text, so the
database reads the fields it filters on with its JSON functions (SQLite's `json_extract`,
PostgreSQL's `->>`): only the rows that could hold one of the ids come back, and only they are
decoded. The transaction holds the thread's lock (SQLite's write lock from `BEGIN IMMEDIATE`;
the thread's row, locked `FOR UPDATE`, on PostgreSQL, whose next statement then sees what the
commit it waited for wrote), so no message lands between the check and the insert.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, Table, and_, bindparam, cast, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from network.threads.codec import decode_messages
from network.threads.message_ids import Wanted, check_held


class HeldIds:
    """The statement that finds a thread's messages holding some ids, built once per store."""

    def __init__(self, messages: Table, dialect: str) -> None:
        data = messages.c.data
        if dialect == "sqlite":
            own, call = (func.json_extract(data, f"$.{key}") for key in ("id", "tool_call_id"))
        else:
            from sqlalchemy.dialects.postgresql import JSON  # noqa: PLC0415 (the URL's only)

            own, call = (cast(data, JSON)[key].astext for key in ("id", "tool_call_id"))
        self.rows: Select[Any] = select(messages.c.seq, data).where(
            messages.c.thread_id == bindparam("b_thread"),
            or_(
                own.in_(bindparam("b_ids", expanding=True)),
                and_(
                    own.is_(None),
                    or_(
                        messages.c.seq.in_(bindparam("b_positions", expanding=True)),
                        call.in_(bindparam("b_calls", expanding=True)),
                    ),
                ),
            ),
        )

    async def check(self, conn: AsyncConnection, thread_id: str, added: Sequence[Any]) -> None:
        """`MessageError` on field "id" when the thread holds an added message's id."""
        wanted = Wanted.of(added)
        if wanted is None:
            return
        found = await conn.execute(
            self.rows,
            {
                "b_thread": thread_id,
                "b_ids": wanted.ids,
                "b_positions": wanted.positions,
                "b_calls": wanted.calls,
            },
        )
        _check_rows(found.all(), added)


def check_sqlite(
    c: sqlite3.Connection, messages: str, thread_id: str, added: Sequence[Any]
) -> None:
    """`HeldIds.check` on a `sqlite3` connection; `messages`: the table's quoted name."""
    wanted = Wanted.of(added)
    if wanted is None:
        return
    own = "json_extract(data, '$.id')"
    call = "json_extract(data, '$.tool_call_id')"
    query = (
        f"SELECT seq, data FROM {messages} WHERE thread_id = ? AND ({own} IN ({_marks(wanted.ids)})"
        f" OR ({own} IS NULL AND (seq IN ({_marks(wanted.positions)})"
        f" OR {call} IN ({_marks(wanted.calls)}))))"
    )
    values = (thread_id, *wanted.ids, *wanted.positions, *wanted.calls)
    _check_rows(c.execute(query, values).fetchall(), added)


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))  # SQLite takes `IN ()`: matches nothing


def _check_rows(rows: Sequence[Any], added: Sequence[Any]) -> None:
    positions = [row[0] for row in rows]
    check_held(zip(positions, decode_messages([row[1] for row in rows]), strict=True), added)
