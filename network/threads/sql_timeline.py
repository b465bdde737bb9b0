"""`SQLStore`'s checkpoints, fork and rewind (see `network.threads.checkpoint_store`).

Every commit writes one `commits` row and one `state_history` row per thread key it changed
(`TimelineWriter`, called inside the commit's transaction). Reading a checkpoint is then a few
index lookups: the commit that saved the call (by its calls count), the commits right after it
that still belong to it, and each thread key's last value at its revision (a grouped read of
the key history's primary key). No agent call is decoded.

A fork or a rewind is one write transaction that copies rows inside the database
(`INSERT ... SELECT`), so no record crosses into Python. The source thread's row is locked
first (PostgreSQL: `FOR SHARE` for a fork, `FOR UPDATE` for a rewind; SQLite: the write lock
every write transaction takes), so no commit or rewind changes it under the copy.
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, String, TextClause, delete, func, literal, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from network.threads.checkpoint_data import (
    Checkpoint,
    CheckpointState,
    ForkResult,
    RewindReport,
    ThreadOrigin,
)
from network.threads.checkpoint_store import CheckpointBase, ForkRequest
from network.threads.ids import check_id
from network.threads.protocol import ThreadExistsError, ThreadNotFoundError
from network.threads.sql_bulk import BulkSync
from network.threads.sql_errors import database_errors
from network.threads.sql_tables import Tables
from network.threads.thread_data import Commit, ThreadInfo, decode_value
from network.threads.timeline import (
    CallRow,
    Mark,
    checkpoint_index,
    checkpoint_of,
    commit_effects,
    commit_keys,
    extends,
    list_checkpoints,
    predates,
    shared_writes_after,
    tool_calls_after,
)

_READ_AHEAD = 8  # commits read at a time when looking for a checkpoint's end


@dataclass(frozen=True, slots=True)
class _Source:
    """A fork's or rewind's source, in its write transaction `conn`: its locked row, the
    checkpoint's index, its first and last commit's marks, the summaries it had, the time."""

    conn: AsyncConnection
    row: Any
    index: int
    start: Mark
    end: Mark
    summaries: int
    now: float


class TimelineWriter:
    """Records a commit in the time-travel tables, inside the commit's transaction."""

    def __init__(self, t: Tables) -> None:
        self.add_commit = t.timeline.commits.insert()
        self.add_values = t.timeline.state_history.insert()

    async def record(
        self,
        conn: AsyncConnection,
        thread_id: str,
        commit: Commit,
        counts: tuple[int, int, int, int | None],
        now: float,
    ) -> None:
        """`counts`: the calls the commit added, then the thread's calls, messages and
        summaries after it (summaries None when it added none)."""
        revision = commit.revision + 1
        calls, results, messages, summaries = counts
        await conn.execute(
            self.add_commit,
            {
                "thread_id": thread_id,
                "revision": revision,
                "calls": calls,
                "results": results,
                "messages": messages,
                "summaries": summaries,
                "at": now,
                "run_id": commit.run_id,
                "keys": json.dumps(commit_keys(commit)),
                "effects": commit_effects(commit),
            },
        )
        rows = [
            {"thread_id": thread_id, "key": key, "revision": revision, "value": value}
            for key, value in [*commit.state.items(), *((key, None) for key in commit.removed)]
        ]
        if rows:
            await conn.execute(self.add_values, rows)


def _mark(row: Any) -> Mark:
    return _marks([row])[0]


def _marks(rows: Sequence[Any]) -> list[Mark]:
    """Marks from `commits` rows (selected whole, in column order). Most commits of a thread
    write the same few keys, so each distinct list of keys is parsed once."""
    keys: dict[str, tuple[str, ...]] = {}
    found = []
    for _thread, revision, calls, results, messages, summaries, at, run, listed, effects in rows:
        wrote = keys.get(listed)
        if wrote is None:
            wrote = keys[listed] = tuple(json.loads(listed))
        found.append(Mark(revision, calls, results, messages, summaries, at, run, wrote, effects))
    return found


class SQLTimeTravel(CheckpointBase, BulkSync):
    """The time-travel half of `SQLStore` (a mixin over its tables and engines)."""

    _reader: AsyncEngine
    _writer: AsyncEngine
    _insert: Any
    _commits: Any  # CommitWriter

    async def setup(self) -> None:
        raise NotImplementedError

    @functools.cached_property
    def _latest_values(self) -> TextClause:
        """The statement behind `_state_rows` (`:t` the thread, `:r` the revision)."""
        h = self._reader.dialect.identifier_preparer.format_table(
            self.tables.timeline.state_history
        )
        return text(
            f"WITH RECURSIVE keys(key) AS ("
            f" SELECT min(key) FROM {h} WHERE thread_id = :t"
            f" UNION ALL"
            f" SELECT (SELECT min(key) FROM {h} WHERE thread_id = :t AND key > keys.key)"
            f" FROM keys WHERE keys.key IS NOT NULL)"
            f" SELECT keys.key, (SELECT value FROM {h} WHERE thread_id = :t AND key = keys.key"
            f" AND revision <= :r ORDER BY revision DESC LIMIT 1)"
            f" FROM keys WHERE keys.key IS NOT NULL"
        )

    @functools.cached_property
    def _call_commit(self) -> TextClause:
        """The statement behind `_locate`'s first read: the commit that saved call `:i` of
        thread `:t`, whose revision is `:top`.

        The calls count never falls as the revision rises, so that commit is found by
        bisecting the revisions 0 to `:top` (about 2 log2(top) probes of the primary key, each
        reading the last commit at or before the middle one), not by reading the thread's
        commits in order, and no index on the count is needed (every commit would write it).
        """
        c = self._reader.dialect.identifier_preparer.format_table(self.tables.timeline.commits)
        past = (
            f"coalesce((SELECT x.results FROM {c} x WHERE x.thread_id = :t"
            " AND x.revision <= (s.lo + s.hi) / 2 ORDER BY x.revision DESC LIMIT 1), 0) > :i"
        )
        return text(
            "WITH RECURSIVE s(lo, hi) AS (SELECT 0, CAST(:top AS INTEGER) UNION ALL"
            f" SELECT CASE WHEN {past} THEN s.lo ELSE (s.lo + s.hi) / 2 END,"
            f" CASE WHEN {past} THEN (s.lo + s.hi) / 2 ELSE s.hi END"
            " FROM s WHERE s.hi - s.lo > 1)"
            f" SELECT * FROM {c} WHERE thread_id = :t AND revision = (SELECT min(hi) FROM s)"
        )

    def _thread_select(self, thread_id: str) -> Select[Any]:
        """The thread's row with its rewind count (what its cached records are checked by)."""
        t = self.tables
        lineage = t.timeline.lineage
        return (
            select(t.threads, lineage.c.rewinds)
            .select_from(t.threads.outerjoin(lineage, lineage.c.thread_id == t.threads.c.thread_id))
            .where(t.threads.c.thread_id == thread_id)
        )

    @contextlib.asynccontextmanager
    async def _reading(self, thread_id: str) -> AsyncIterator[tuple[AsyncConnection, Any]]:
        """A consistent read of one thread: its read transaction and its row (with its rewind
        count), None when the thread does not exist."""
        check_id("thread_id", thread_id)
        await self.setup()
        async with self._reader.begin() as conn:
            yield conn, (await conn.execute(self._thread_select(thread_id))).first()

    # -- reading -------------------------------------------------------------------------------

    @database_errors
    async def checkpoints(self, thread_id: str) -> list[Checkpoint] | None:
        """The thread's checkpoints, oldest first; None for a missing thread."""
        check_id("thread_id", thread_id)
        await self.setup()
        t = self.tables
        commits = t.timeline.commits
        async with self._reader.begin() as conn:
            found = await conn.scalar(
                select(t.threads.c.thread_id).where(t.threads.c.thread_id == thread_id)
            )
            if found is None:
                return None
            calls = (
                await conn.execute(
                    select(t.results.c.agent, t.results.c.run_id, t.results.c.at)
                    .where(t.results.c.thread_id == thread_id)
                    .order_by(t.results.c.seq)
                )
            ).all()
            marks = (
                await conn.execute(
                    select(commits)
                    .where(commits.c.thread_id == thread_id)
                    .order_by(commits.c.revision)
                )
            ).all()
        return list_checkpoints(_marks(marks), [CallRow(*row) for row in calls])

    async def _locate(
        self, conn: AsyncConnection, row: Any, checkpoint: Any
    ) -> tuple[int, list[Mark], int]:
        """(call index, the commits of its checkpoint, the summaries count at its end), in
        the thread whose row is `row`."""
        commits = self.tables.timeline.commits
        thread_id = row.thread_id
        mine = commits.c.thread_id == thread_id
        index = checkpoint_index(thread_id, checkpoint, row.result_count)
        found = await conn.execute(
            self._call_commit, {"t": thread_id, "i": index, "top": row.revision}
        )
        first = found.first()
        if first is None or not first.results - first.calls <= index < first.results:
            raise predates(thread_id, index)
        group = [_mark(first)]
        more = True
        while more:
            rows = (
                await conn.execute(
                    select(commits)
                    .where(mine, commits.c.revision > group[-1].revision)
                    .order_by(commits.c.revision)
                    .limit(_READ_AHEAD)
                )
            ).all()
            more = len(rows) == _READ_AHEAD
            for row in rows:
                mark = _mark(row)
                if not extends(group[0], mark):
                    more = False
                    break
                group.append(mark)
        summaries = await conn.scalar(
            select(func.max(commits.c.summaries)).where(
                mine, commits.c.revision <= group[-1].revision
            )
        )
        return index, group, summaries or 0

    async def _state_rows(
        self, conn: AsyncConnection, thread_id: str, revision: int
    ) -> dict[str, str]:
        """Each thread key's JSON text at `revision` (keys removed or unset left out).

        One lookup per key the thread ever had, each from the primary key's index: the keys
        are walked with a recursive query (a skip scan, which neither database does by
        itself), and each key's last value at or before `revision` is one index probe. So
        the cost grows with the number of keys, not with the thread's length."""
        rows = await conn.execute(self._latest_values, {"t": thread_id, "r": revision})
        return {key: value for key, value in rows.all() if value is not None}

    async def _call(self, conn: AsyncConnection, thread_id: str, index: int) -> CallRow:
        r = self.tables.results
        row = (
            await conn.execute(
                select(r.c.agent, r.c.run_id, r.c.at).where(
                    r.c.thread_id == thread_id, r.c.seq == index
                )
            )
        ).one()
        return CallRow(*row)

    @database_errors
    async def state_at(
        self, thread_id: str, checkpoint: int | Checkpoint
    ) -> CheckpointState | None:
        """The thread as it was at `checkpoint`; None for a missing thread."""
        async with self._reading(thread_id) as (conn, row):
            if row is None:
                return None
            index, group, summaries = await self._locate(conn, row, checkpoint)
            call = await self._call(conn, thread_id, index)
            state = await self._state_rows(conn, thread_id, group[-1].revision)
            start = group[0]
            # Only the rows up to the checkpoint: a first read in a process fetches no more
            # of the thread than it returns (the rest is fetched when something reads it).
            entry, _ = await self._sync(
                conn, thread_id, row, upto=(start.messages, start.results, summaries)
            )
        return CheckpointState.model_construct(
            thread_id=thread_id,
            checkpoint=checkpoint_of(index, call, start, group),
            state={key: decode_value(text) for key, text in state.items()},
            messages=entry.conversation(start.messages),
            results=entry.calls(start.results),
            summaries=entry.summaries[:summaries],
        )

    @database_errors
    async def origin(self, thread_id: str) -> ThreadOrigin | None:
        """Where a thread came from (a fork, or a rewind's keeping); None for any other."""
        check_id("thread_id", thread_id)
        await self.setup()
        lineage = self.tables.timeline.lineage
        async with self._reader.begin() as conn:
            row = (
                await conn.execute(select(lineage).where(lineage.c.thread_id == thread_id))
            ).first()
        if row is None or row.parent_thread_id is None:
            return None
        return ThreadOrigin(
            thread_id=thread_id,
            parent_thread_id=row.parent_thread_id,
            checkpoint=row.checkpoint,
            kind=row.kind,
            at=row.at,
        )

    # -- writing -------------------------------------------------------------------------------

    async def _copy(
        self,
        conn: AsyncConnection,
        source: str,
        target: str,
        upto: tuple[int, int, int, int | None],
    ) -> None:
        """Copy `source`'s records into `target` inside the database: `upto` is (revision,
        calls, messages, summaries; None: all) of the source's to copy."""
        t = self.tables
        revision, calls, messages, summaries = upto
        parts: list[tuple[Any, Any]] = [
            (t.messages, t.messages.c.seq < messages),
            (t.results, t.results.c.seq < calls),
            (t.timeline.commits, t.timeline.commits.c.revision <= revision),
            (t.timeline.state_history, t.timeline.state_history.c.revision <= revision),
            (
                t.summaries,
                t.summaries.c.seq >= 0 if summaries is None else t.summaries.c.seq < summaries,
            ),
        ]
        for table, where in parts:
            columns = [column for column in table.c if column.name != "thread_id"]
            rows = select(literal(target, String), *columns).where(
                table.c.thread_id == source, where
            )
            await conn.execute(
                table.insert().from_select(["thread_id", *(c.name for c in columns)], rows)
            )

    async def _new_thread(
        self,
        conn: AsyncConnection,
        thread_id: str,
        source: Any,
        counts: tuple[int, int, int],
        meta: str,
        now: float,
    ) -> ThreadInfo:
        """Insert the row of a copy of `source`: (revision, messages, calls) it holds."""
        revision, messages, results = counts
        info = ThreadInfo(
            thread_id=thread_id,
            app_name=source.app_name,
            user_id=source.user_id,
            revision=revision,
            created_at=now,
            updated_at=now,
            message_count=messages,
            result_count=results,
            metadata=json.loads(meta),
        )
        values = info.model_dump(exclude={"metadata"})
        await conn.execute(self.tables.threads.insert().values(**values, meta=meta))
        return info

    async def _taken(self, conn: AsyncConnection, thread_id: str) -> None:
        threads = self.tables.threads
        found = await conn.scalar(
            select(threads.c.thread_id).where(threads.c.thread_id == thread_id)
        )
        if found is not None:
            raise ThreadExistsError(f"thread {thread_id!r} already exists")

    async def _after(self, conn: AsyncConnection, thread_id: str, revision: int) -> list[Mark]:
        commits = self.tables.timeline.commits
        rows = await conn.execute(
            select(commits)
            .where(commits.c.thread_id == thread_id, commits.c.revision > revision)
            .order_by(commits.c.revision)
        )
        return _marks(rows.all())

    @database_errors
    async def _fork_thread(self, request: ForkRequest) -> ForkResult:
        thread_id, new_thread_id = request.thread_id, request.new_thread_id
        metadata = request.metadata
        async with self._travel(thread_id, request.at, "new_thread_id", new_thread_id) as src:
            end, conn = src.end, src.conn
            copied = (end.revision, src.start.results, src.start.messages, src.summaries)
            await self._copy(conn, thread_id, new_thread_id, copied)
            values = await self._state_rows(conn, thread_id, end.revision)
            meta = json.dumps(metadata) if metadata is not None else src.row.meta
            counts = (end.revision, src.start.messages, src.start.results)
            info = await self._new_thread(conn, new_thread_id, src.row, counts, meta, src.now)
            await self._set_state(conn, new_thread_id, values)
            await self._set_origin(conn, new_thread_id, thread_id, src.index, "fork", src.now)
            await self._commits.pending.copy_waiting(
                conn, thread_id, new_thread_id, end.revision, src.row.revision
            )
            if request.state:
                commit = Commit(revision=end.revision, state=request.state)
                await self._commits.write(conn, new_thread_id, commit, [], [], src.now)
                info.revision += 1
            after = await self._after(conn, thread_id, end.revision)
        return ForkResult.model_construct(
            thread=info,
            origin=request.origin(src.index, src.now),
            shared_keys=shared_writes_after(after),
        )

    async def _set_state(
        self, conn: AsyncConnection, thread_id: str, values: dict[str, str]
    ) -> None:
        if values:
            rows = [{"thread_id": thread_id, "key": k, "value": v} for k, v in values.items()]
            await conn.execute(self.tables.thread_state.insert(), rows)

    async def _set_origin(
        self,
        conn: AsyncConnection,
        thread_id: str,
        parent: str,
        checkpoint: int,
        kind: str,
        now: float,
    ) -> None:
        await conn.execute(
            self.tables.timeline.lineage.insert().values(
                thread_id=thread_id,
                parent_thread_id=parent,
                checkpoint=checkpoint,
                kind=kind,
                at=now,
                rewinds=0,
            )
        )

    @contextlib.asynccontextmanager
    async def _travel(
        self,
        thread_id: str,
        checkpoint: int | Checkpoint,
        new_field: str,
        new_thread_id: str,
        *,
        exclusive: bool = False,
    ) -> AsyncIterator[_Source]:
        """The write transaction of a fork or rewind from `thread_id` at `checkpoint` to the
        new thread `new_thread_id` (checked as `new_field`): the source's row locked (a fork
        only reads it: shared; a rewind changes it: `exclusive`) once the new id is found
        free, and where the checkpoint is in it."""
        check_id("thread_id", thread_id)
        check_id(new_field, new_thread_id)
        await self.setup()
        now = time.time()
        async with self._writer.begin() as conn:
            query = self._thread_select(thread_id).with_for_update(
                read=not exclusive, of=self.tables.threads
            )
            row = (await conn.execute(query)).first()
            if row is None:
                raise ThreadNotFoundError(f"thread {thread_id!r} does not exist")
            await self._taken(conn, new_thread_id)
            index, group, summaries = await self._locate(conn, row, checkpoint)
            yield _Source(conn, row, index, group[0], group[-1], summaries, now)

    @database_errors
    async def rewind_thread(
        self, thread_id: str, *, to: int | Checkpoint, kept_as: str
    ) -> RewindReport:
        """Move `thread_id` back to `to`, keeping the thread as it was as `kept_as`."""
        async with self._travel(thread_id, to, "kept_as", kept_as, exclusive=True) as src:
            row, start, end = src.row, src.start, src.end
            after = await self._after(src.conn, thread_id, end.revision)
            await self._keep_whole(src, thread_id, kept_as)
            withdrawn = await self._commits.pending.withdraw_after(
                src.conn, thread_id, (end.revision, row.revision), src.index, kept_as
            )
            await self._cut(src.conn, thread_id, end.revision, start, src.summaries)
            revision = await self._commit_rewind(src, thread_id)
        self.decoded.forget(thread_id)
        return RewindReport.model_construct(
            thread_id=thread_id,
            checkpoint=src.index,
            revision=revision,
            discarded_calls=row.result_count - start.results,
            kept_as=kept_as,
            tool_calls_not_undone=tool_calls_after(after),
            shared_keys=shared_writes_after(after),
            withdrawn=withdrawn,
        )

    async def _keep_whole(self, src: _Source, thread_id: str, kept_as: str) -> None:
        """A rewind's first step: the thread as it is, whole, copied to `kept_as` (its
        records, its current keys), its origin naming the rewind at the checkpoint."""
        conn, row = src.conn, src.row
        everything = (row.revision, row.result_count, row.message_count, None)
        await self._copy(conn, thread_id, kept_as, everything)
        counts = (row.revision, row.message_count, row.result_count)
        await self._new_thread(conn, kept_as, row, counts, row.meta, src.now)
        current = self.tables.thread_state
        await conn.execute(
            current.insert().from_select(
                ["thread_id", "key", "value"],
                select(literal(kept_as, String), current.c.key, current.c.value).where(
                    current.c.thread_id == thread_id
                ),
            )
        )
        await self._set_origin(conn, kept_as, thread_id, src.index, "rewind", src.now)

    async def _commit_rewind(self, src: _Source, thread_id: str) -> int:
        """The cut thread one revision on: its counts back at the checkpoint, its keys as
        they were at the checkpoint's last commit, one commit recording the rewind (no calls,
        no keys), one more rewind counted. Returns the new revision."""
        t, conn, start = self.tables, src.conn, src.start
        revision: int = src.row.revision + 1
        await conn.execute(
            update(t.threads)
            .where(t.threads.c.thread_id == thread_id)
            .values(
                revision=revision,
                message_count=start.messages,
                result_count=start.results,
                updated_at=src.now,
            )
        )
        await self._set_state(
            conn, thread_id, await self._state_rows(conn, thread_id, src.end.revision)
        )
        await conn.execute(
            t.timeline.commits.insert().values(
                thread_id=thread_id,
                revision=revision,
                calls=0,
                results=start.results,
                messages=start.messages,
                summaries=None,
                at=src.now,
                run_id=None,
                keys="[]",
                effects=None,
            )
        )
        await self._count_rewind(conn, thread_id)
        return revision

    async def _cut(
        self, conn: AsyncConnection, thread_id: str, revision: int, start: Mark, summaries: int
    ) -> None:
        """Delete what came after a checkpoint (the caller copied it to the kept thread)."""
        t = self.tables
        cuts: Sequence[tuple[Any, Any]] = (
            (t.messages, t.messages.c.seq >= start.messages),
            (t.results, t.results.c.seq >= start.results),
            (t.summaries, t.summaries.c.seq >= summaries),
            (t.timeline.commits, t.timeline.commits.c.revision > revision),
            (t.timeline.state_history, t.timeline.state_history.c.revision > revision),
            (t.thread_state, t.thread_state.c.key.is_not(None)),
        )
        for table, where in cuts:
            await conn.execute(delete(table).where(table.c.thread_id == thread_id, where))

    async def _count_rewind(self, conn: AsyncConnection, thread_id: str) -> None:
        lineage = self.tables.timeline.lineage
        insert = self._insert(lineage).values(thread_id=thread_id, rewinds=1)
        await conn.execute(
            insert.on_conflict_do_update(
                index_elements=[lineage.c.thread_id], set_={"rewinds": lineage.c.rewinds + 1}
            )
        )
