"""The statements of one SQL commit, run inside the transaction `SQLStore.append_results` opened.

Round trips and SQLAlchemy's per-statement work dominate a commit's cost, so the statements are
built once per store (with bound parameters) and a commit makes as few as it can: one
`UPDATE ... RETURNING` checks the revision, bumps it and takes the thread's row lock; one
multi-row `INSERT` each for messages and results (and, rarely, summaries: those `(covers,
JSON)` pairs are numbered after the thread's last one); one upsert for the thread keys; per shared
scope, one `SELECT ... FOR UPDATE` of the keys written and one multi-row `UPDATE`.

Shared (`user:` / `app:`) keys: rows are locked in key order (user scope first), so two commits
never wait on each other crosswise; the run's writes are re-applied to the locked values with
their merge handlers. A key with no row yet has nothing to lock: it is inserted with `ON
CONFLICT DO NOTHING`, and when a concurrent commit inserted it first, its row is locked and
merged like any other.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, NoReturn

from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from network.errors import StaleThreadError, ThreadError
from network.threads.pending import waiting_error
from network.threads.protocol import ThreadNotFoundError
from network.threads.sql_message_ids import HeldIds
from network.threads.sql_pending import PendingStatements
from network.threads.sql_tables import Tables
from network.threads.sql_timeline import TimelineWriter
from network.threads.thread_data import Commit, SharedWrite


class CommitWriter:
    """Applies commits to one store's tables; `insert` is the dialect's upsert-capable insert."""

    def __init__(self, t: Tables, insert: Any, dialect: str) -> None:
        self.t = t
        self.insert = insert
        threads = t.threads
        self.bump = (
            update(threads)
            .where(
                (threads.c.thread_id == bindparam("b_thread"))
                & (threads.c.revision == bindparam("b_revision"))
            )
            .values(
                revision=threads.c.revision + 1,
                updated_at=bindparam("b_now"),
                message_count=threads.c.message_count + bindparam("b_messages"),
                result_count=threads.c.result_count + bindparam("b_results"),
            )
            .returning(
                threads.c.app_name,
                threads.c.user_id,
                threads.c.message_count,
                threads.c.result_count,
            )
        )
        self.revision = select(threads.c.revision).where(
            threads.c.thread_id == bindparam("b_thread")
        )
        self.locked_revision = self.revision.with_for_update()
        self.add_messages = t.messages.insert()
        self.add_results = t.results.insert()
        self.add_summaries = t.summaries.insert()
        self.next_summary = select(func.coalesce(func.max(t.summaries.c.seq) + 1, 0)).where(
            t.summaries.c.thread_id == bindparam("b_thread")
        )
        state = t.thread_state
        upsert = insert(state)
        self.set_state = upsert.on_conflict_do_update(
            index_elements=[state.c.thread_id, state.c.key], set_={"value": upsert.excluded.value}
        )
        self.remove_state = delete(state).where(
            (state.c.thread_id == bindparam("b_thread"))
            & state.c.key.in_(bindparam("b_keys", expanding=True))
        )
        self.pending = PendingStatements(t.pending)
        self.held_ids = HeldIds(t.messages, dialect)
        self.timeline = TimelineWriter(t)
        self.scopes = {
            "user": _ScopeStatements(t.user_state, ("app_name", "user_id")),
            "app": _ScopeStatements(t.app_state, ("app_name",)),
        }

    async def write(
        self,
        conn: AsyncConnection,
        thread_id: str,
        commit: Commit,
        messages: list[str],
        results: list[dict[str, Any]],
        now: float,
        summaries: Sequence[tuple[int, str]] = (),
    ) -> tuple[int, int, int]:
        """Apply `commit` to the thread, or raise (the caller's transaction then rolls back).

        Returns the sequence numbers the commit's first message, result and summary got."""
        if commit.answered:  # before the revision: a second answer is told it came second
            await self.pending.claim_all(conn, thread_id, commit)
        bumped = (
            await conn.execute(
                self.bump,
                {
                    "b_thread": thread_id,
                    "b_revision": commit.revision,
                    "b_now": now,
                    "b_messages": len(messages),
                    "b_results": len(results),
                },
            )
        ).first()
        if bumped is None:
            await self._refuse(conn, thread_id, commit.revision)
        app_name, user_id, message_count, result_count = bumped
        first = (message_count - len(messages), result_count - len(results))
        await self._add_records(conn, thread_id, commit.run_id, first, messages, results)
        first_summary = await self._add_summaries(conn, thread_id, commit.run_id, summaries)
        await self._write_keys(conn, thread_id, commit)
        if commit.shared:
            await self._shared(conn, {"app_name": app_name, "user_id": user_id}, commit.shared)
        if commit.pending:
            await self.pending.add_all(conn, thread_id, commit)
        held = (first_summary + len(summaries)) if summaries else None
        counts = (len(results), result_count, message_count, held)
        await self.timeline.record(conn, thread_id, commit, counts, now)
        return *first, first_summary

    async def _add_records(
        self,
        conn: AsyncConnection,
        thread_id: str,
        run_id: str | None,
        first: tuple[int, int],
        messages: list[str],
        results: list[dict[str, Any]],
    ) -> None:
        """The commit's messages and calls, numbered from `first` (the bump's counts)."""
        if messages:
            rows = [
                {"thread_id": thread_id, "seq": first[0] + i, "run_id": run_id, "data": data}
                for i, data in enumerate(messages)
            ]
            await conn.execute(self.add_messages, rows)
        if results:
            rows = [
                {"thread_id": thread_id, "seq": first[1] + i, "run_id": run_id, **values}
                for i, values in enumerate(results)
            ]
            await conn.execute(self.add_results, rows)

    async def _add_summaries(
        self,
        conn: AsyncConnection,
        thread_id: str,
        run_id: str | None,
        summaries: Sequence[tuple[int, str]],
    ) -> int:
        """The commit's summaries, numbered after the thread's last one; the first's number."""
        if not summaries:
            return 0
        first: int = await conn.scalar(self.next_summary, {"b_thread": thread_id})
        rows = [
            {"thread_id": thread_id, "seq": first + i, "run_id": run_id, "covers": c, "data": d}
            for i, (c, d) in enumerate(summaries)
        ]
        await conn.execute(self.add_summaries, rows)
        return first

    async def _write_keys(self, conn: AsyncConnection, thread_id: str, commit: Commit) -> None:
        """The thread keys the commit sets and removes."""
        if commit.state:
            rows = [
                {"thread_id": thread_id, "key": key, "value": value}
                for key, value in commit.state.items()
            ]
            await conn.execute(self.set_state, rows)
        if commit.removed:
            await conn.execute(
                self.remove_state, {"b_thread": thread_id, "b_keys": list(commit.removed)}
            )

    async def appending(self, conn: AsyncConnection, thread_id: str, commit: Commit) -> Commit:
        """An append-only commit (`Commit.append_only`) at the thread's current revision, its
        row locked (PostgreSQL; SQLite's transaction holds the write lock); refused while the
        thread waits on a pending call, or when it holds an added message's id."""
        found = await conn.scalar(self.locked_revision, {"b_thread": thread_id})
        if found is None:
            raise ThreadNotFoundError(f"thread {thread_id!r} does not exist (deleted?)")
        waiting = await self.pending.waiting_now(conn, thread_id)
        if waiting:
            raise waiting_error(thread_id, waiting)
        await self.held_ids.check(conn, thread_id, commit.messages)
        return dataclasses.replace(commit, revision=found)

    async def _refuse(self, conn: AsyncConnection, thread_id: str, expected: int) -> NoReturn:
        found = await conn.scalar(self.revision, {"b_thread": thread_id})
        if found is None:
            raise ThreadNotFoundError(f"thread {thread_id!r} does not exist (deleted?)")
        raise StaleThreadError(
            f"thread {thread_id!r} is at revision {found}, but this run loaded revision "
            f"{expected}: another run committed to it meanwhile",
            thread_id=thread_id,
            expected=expected,
            found=found,
        )

    async def _shared(
        self, conn: AsyncConnection, owner: dict[str, str], writes: list[SharedWrite]
    ) -> None:
        """Re-apply `user:` / `app:` writes to the stored values, their rows locked."""
        by_scope: dict[str, dict[str, list[SharedWrite]]] = defaultdict(lambda: defaultdict(list))
        for write in writes:
            by_scope[write.scope][write.key].append(write)
        for scope in ("user", "app"):  # a fixed lock order: no deadlock between commits
            keyed = by_scope.get(scope)
            if not keyed:
                continue
            statements = self.scopes[scope]
            ident = {f"b_{name}": owner[name] for name in statements.owner}
            keys = sorted(keyed)
            locked = await conn.execute(statements.lock, {**ident, "b_keys": keys})
            stored: dict[str, str] = {key: value for key, value in locked.all()}
            changed, removed = [], []
            for key in keys:
                if key not in stored:
                    await self._merge_new(conn, statements, ident, key, keyed[key])
                    continue
                value = _apply(stored[key], keyed[key])
                if value is None:
                    removed.append(key)
                elif value != stored[key]:
                    changed.append({**ident, "b_key": key, "b_value": value})
            if changed:
                await conn.execute(statements.update, changed)
            if removed:
                await conn.execute(statements.remove, {**ident, "b_keys": removed})

    async def _merge_new(
        self,
        conn: AsyncConnection,
        statements: _ScopeStatements,
        ident: dict[str, str],
        key: str,
        writes: list[SharedWrite],
    ) -> None:
        """Merge writes into a key that had no row when the commit looked."""
        table = statements.table
        row = {name[2:]: value for name, value in ident.items()}
        current: str | None = None
        for _attempt in range(5):
            value = _apply(current, writes)
            if value is None:
                if current is not None:
                    await conn.execute(statements.remove, {**ident, "b_keys": [key]})
                return
            if current is not None:
                await conn.execute(statements.update, {**ident, "b_key": key, "b_value": value})
                return
            statement = self.insert(table).values(**row, key=key, value=value)
            inserted = await conn.execute(statement.on_conflict_do_nothing().returning(table.c.key))
            if inserted.first() is not None:
                return
            # A concurrent commit inserted it first: lock its row and merge again.
            locked = await conn.execute(statements.lock, {**ident, "b_keys": [key]})
            current = next((value for _, value in locked.all()), None)
        raise ThreadError(f"state key {key!r}: could not lock its row to merge a write")


class _ScopeStatements:
    """The statements on one shared scope's table, whose rows belong to `owner` columns."""

    def __init__(self, table: Any, owner: tuple[str, ...]) -> None:
        self.table = table
        self.owner = owner
        mine = [table.c[name] == bindparam(f"b_{name}") for name in owner]
        self.lock = (
            select(table.c.key, table.c.value)
            .where(*mine, table.c.key.in_(bindparam("b_keys", expanding=True)))
            .order_by(table.c.key)
            .with_for_update()
        )
        self.update = (
            update(table)
            .where(*mine, table.c.key == bindparam("b_key"))
            .values(value=bindparam("b_value"))
        )
        self.remove = delete(table).where(
            *mine, table.c.key.in_(bindparam("b_keys", expanding=True))
        )


def _apply(current: str | None, writes: list[SharedWrite]) -> str | None:
    for write in writes:
        current = write.apply(current)
    return current
