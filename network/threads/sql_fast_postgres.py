"""A run's load and commits on PostgreSQL, each one statement (one round trip, atomic on its
own), on the store's own connections (`sql_links.PostgresLink`: libpq's, `pg_wire`).

- The load is one `SELECT` of the thread's row with arrays beside it: the messages, calls and
  summaries committed after those the process holds, each scope's keys, the waiting calls.
  One statement sees one snapshot, so it is consistent without a transaction of its own.
- A commit is one statement of data-modifying CTEs: the `UPDATE ... RETURNING` that checks and
  bumps the revision (and takes the thread's row lock), then the inserts of messages, calls,
  waiting calls, the thread keys' upsert and removal, and the checkpoint's rows, each reading
  the bumped row, so that nothing is written when the revision was stale. Rows come in as
  arrays (`unnest`), numbered from the counts the bump returned. Only the parts the commit
  writes are in its statement (one statement per shape: keys set, keys removed, calls waited
  on), since a part run on empty arrays still opens and locks its table and indexes.

A commit that claims answers, writes `user:` / `app:` keys, appends on its own or stores a
summary takes `CommitWriter`'s path (a transaction of several statements): claims must be
judged before the revision, shared keys are merged by the application's handlers under a row
lock, and those commits are rare.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from network.errors import StaleThreadError
from network.threads.protocol import ThreadExistsError, ThreadNotFoundError
from network.threads.sql_fast import Encoded, Header, Hint, Loaded, quoted, start_at
from network.threads.sql_links import PostgresLink
from network.threads.sql_tables import Tables
from network.threads.thread_data import Commit
from network.threads.timeline import commit_effects, commit_keys


def takes_fast_path(encoded: Encoded) -> bool:
    """Whether the one-statement commit can apply this commit (see the module docstring)."""
    commit = encoded.commit
    return not (commit.answered or commit.shared or commit.append_only or encoded.summaries)


class PostgresFast:
    """The load and commit statements of one store's tables, on `PostgresLink`."""

    def __init__(self, tables: Tables, preparer: Any, link: PostgresLink) -> None:
        self.link = link
        q = quoted(tables, preparer)
        self.load_sql = _load_sql(q)
        self.create_sql = (
            f"INSERT INTO {q['threads']} (thread_id, app_name, user_id, revision, created_at,"
            " updated_at, message_count, result_count, meta)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
            " ON CONFLICT (thread_id) DO NOTHING RETURNING thread_id"
        )
        # A new thread's row, and what a load of it would read (its user's and app's keys;
        # it has nothing else yet), in one statement.
        read_keys = (
            " SELECT (SELECT count(*) FROM n),"
            f' ARRAY(SELECT ROW(x."key", x.value) FROM {q["user_state"]} x'
            " WHERE x.app_name = $2 AND x.user_id = $3),"
            f' ARRAY(SELECT ROW(x."key", x.value) FROM {q["app_state"]} x WHERE x.app_name = $2)'
        )
        self.create_reading_sql = f"WITH n AS ({self.create_sql})" + read_keys
        # ... and with a first commit of messages (a served run's input): the row made at
        # its revision and counts ($4, $7), its messages ($11, run $10) and its checkpoint
        # row (keys $12) written only when the row was (`FROM n`).
        self.create_keeping_sql = (
            f"WITH n AS ({self.create_sql}),"
            f" m AS (INSERT INTO {q['messages']} (thread_id, seq, run_id, data)"
            " SELECT $1, x.o - 1, $10, x.d FROM n, unnest($11::text[]) WITH ORDINALITY AS x(d, o)),"
            f" c AS (INSERT INTO {q['commits']}"
            " (thread_id, revision, calls, results, messages, summaries, at, run_id, keys,"
            " effects) SELECT $1, $4, 0, 0, $7, NULL, $6, $10, $12, NULL FROM n)" + read_keys
        )
        self.revision_sql = f"SELECT revision FROM {q['threads']} WHERE thread_id = $1"
        self._q = q
        self._commit_sql: dict[tuple[bool, bool, bool], str] = {}

    def load_from(self, first: int) -> str:
        """The load's statement for a statement that embeds it: its record starts (`$2` to
        `$4`) numbered from `$first` on."""
        return (
            self.load_sql.replace("$2", f"${first}")
            .replace("$3", f"${first + 1}")
            .replace("$4", f"${first + 2}")
        )

    async def load(self, thread_id: str, hint: Hint) -> Loaded | None:
        """The thread as one statement reads it (read again from the start when the process's
        records turn out not to be a prefix of it)."""
        first = (0, 0, 0) if hint is None else hint[1:]
        while True:
            rows = await self.link.fetch(self.load_sql, thread_id, *first)
            if not rows:
                return None
            loaded = loaded_of(rows[0], first, hint)
            if loaded is not None:
                return loaded
            first, hint = start_at(Header(*rows[0][:10]), hint), None

    async def create_thread(self, values: list[Any]) -> None:
        """The insert of a new thread's row; `ThreadExistsError` when the id is taken."""
        if not await self.link.fetch(self.create_sql, *values):
            raise ThreadExistsError(f"thread {values[0]!r} already exists")

    async def create_reading(self, values: list[Any], first: Encoded | None = None) -> Loaded:
        """The insert of a new thread's row (`ThreadExistsError` when the id is taken), with
        its `first` commit (messages only: a served run's input), and the thread as a load
        would read it then, in one statement."""
        header = Header._make([*values, None])
        if first is None:
            rows = await self.link.fetch(self.create_reading_sql, *values)
        else:  # the row as the commit leaves it: revision 1, its messages counted
            commit = first.commit
            header = header._replace(
                revision=commit.revision + 1,
                updated_at=first.now,
                message_count=len(first.messages),
            )
            keys = json.dumps(commit_keys(commit))
            row = header[:9]
            rows = await self.link.fetch(
                self.create_keeping_sql, *row, commit.run_id, first.messages, keys
            )
        created, user, app = rows[0]
        if not created:
            raise ThreadExistsError(f"thread {values[0]!r} already exists")
        messages = () if first is None else first.messages
        return Loaded(header, (0, 0, 0), messages, scopes=({}, dict(user), dict(app)))

    async def commit(self, encoded: Encoded) -> tuple[int, ...]:
        """Apply the commit (see `takes_fast_path`); the new revision and the sequence numbers
        its first message and call got."""
        commit, thread_id = encoded.commit, encoded.thread_id
        results = encoded.results
        new_revision = commit.revision + 1
        pending = commit.pending
        arguments: list[Any] = [
            thread_id,
            commit.revision,
            encoded.now,
            commit.run_id,
            encoded.messages,
            [r["agent"] for r in results],
            [r["at"] for r in results],
            [r["history_length"] for r in results],
            [r["data"] for r in results],
            json.dumps(commit_keys(commit)),
            commit_effects(commit),
        ]
        if commit.state:
            arguments += [list(commit.state), list(commit.state.values())]
        if commit.removed:
            arguments.append(list(commit.removed))
        if pending:
            arguments += [
                [entry.id for entry in pending],
                [entry.run_id for entry in pending],
                [entry.to_text(new_revision) for entry in pending],
            ]
        rows = await self.link.fetch(self._commit_for(commit), *arguments)
        if not rows:
            found = await self.link.fetch(self.revision_sql, thread_id)
            if not found:
                raise ThreadNotFoundError(f"thread {thread_id!r} does not exist (deleted?)")
            raise StaleThreadError(
                f"thread {thread_id!r} is at revision {found[0][0]}, but this run loaded "
                f"revision {commit.revision}: another run committed to it meanwhile",
                thread_id=thread_id,
                expected=commit.revision,
                found=found[0][0],
            )
        message_count, result_count = rows[0]
        return (
            new_revision,
            message_count - len(encoded.messages),
            result_count - len(results),
            0,
        )

    def _commit_for(self, commit: Commit) -> str:
        """The one-statement commit with the parts `commit` needs (`_commit_sql`), made once
        per shape."""
        shape = (bool(commit.state), bool(commit.removed), bool(commit.pending))
        sql = self._commit_sql.get(shape)
        if sql is None:
            sql = self._commit_sql[shape] = _commit_sql(self._q, *shape)
        return sql


def loaded_of(row: Sequence[Any], first: tuple[int, int, int], hint: Hint) -> Loaded | None:
    """The thread the load's columns (`row`, read from `first` on) hold; None when they must be
    read again from the start (a new incarnation of the thread, or rewound)."""
    header = Header(*row[:10])
    if start_at(header, hint) != first:
        return None
    messages, results, summaries, state, user, app, waiting = row[10:]
    return Loaded(
        header,
        first,
        messages,
        results,
        summaries,
        (dict(state), dict(user), dict(app)),
        list(waiting),
    )


def _load_sql(q: dict[str, str]) -> str:
    """The load (see the module docstring); `q`: the tables' quoted names."""
    return (
        "SELECT t.thread_id, t.app_name, t.user_id, t.revision, t.created_at, t.updated_at,"
        " t.message_count, t.result_count, t.meta, l.rewinds,"
        f" ARRAY(SELECT m.data FROM {q['messages']} m WHERE m.thread_id = $1"
        " AND m.seq >= $2 AND m.seq < t.message_count ORDER BY m.seq),"
        f" ARRAY(SELECT ROW(r.data, r.history_length, r.at) FROM {q['results']} r"
        " WHERE r.thread_id = $1 AND r.seq >= $3 AND r.seq < t.result_count ORDER BY r.seq),"
        f" ARRAY(SELECT s.data FROM {q['summaries']} s WHERE s.thread_id = $1"
        " AND s.seq >= $4 ORDER BY s.seq),"
        f' ARRAY(SELECT ROW(x."key", x.value) FROM {q["thread_state"]} x'
        " WHERE x.thread_id = $1),"
        f' ARRAY(SELECT ROW(x."key", x.value) FROM {q["user_state"]} x'
        " WHERE x.app_name = t.app_name AND x.user_id = t.user_id),"
        f' ARRAY(SELECT ROW(x."key", x.value) FROM {q["app_state"]} x'
        " WHERE x.app_name = t.app_name),"
        f" ARRAY(SELECT p.data FROM {q['pending']} p WHERE p.thread_id = $1"
        " AND p.answer IS NULL ORDER BY p.seq)"
        f" FROM {q['threads']} t LEFT JOIN {q['lineage']} l ON l.thread_id = t.thread_id"
        " WHERE t.thread_id = $1"
    )


def _commit_sql(q: dict[str, str], keys: bool, removed: bool, pending: bool) -> str:
    """The one-statement commit (see the module docstring), with only the parts a commit of
    this shape writes: the thread keys set (`keys`: their upsert and history rows), removed
    (their deletion and history rows), the calls it stops on (`pending`). A part left in on
    empty arrays still costs the server its table's and indexes' opening and locking on every
    commit (a run's last commit, the answer, writes no key: about a quarter of its CPU).

    Parameters: $1 thread, $2 revision read, $3 time, $4 run, $5 messages, $6 to $9 the calls'
    agents, times, history lengths and texts, $10 the keys' names (JSON), $11 the effects;
    then, in this order and only when present, the keys and their values, the removed keys,
    the pending calls' ids, runs and texts."""
    numbers = iter(range(12, 19))
    keys_at = (next(numbers), next(numbers)) if keys else (0, 0)
    removed_at = next(numbers) if removed else 0
    pending_at = (next(numbers), next(numbers), next(numbers)) if pending else (0, 0, 0)
    k, v = keys_at
    parts = [
        f"WITH bump AS (UPDATE {q['threads']} SET revision = revision + 1, updated_at = $3,"
        " message_count = message_count + cardinality($5::text[]),"
        " result_count = result_count + cardinality($6::text[])"
        " WHERE thread_id = $1 AND revision = $2 RETURNING message_count, result_count)",
        f" m AS (INSERT INTO {q['messages']} (thread_id, seq, run_id, data)"
        " SELECT $1, b.message_count - cardinality($5::text[]) + x.o - 1, $4, x.d"
        " FROM bump b, unnest($5::text[]) WITH ORDINALITY AS x(d, o))",
        f" r AS (INSERT INTO {q['results']}"
        " (thread_id, seq, run_id, agent, at, history_length, data)"
        " SELECT $1, b.result_count - cardinality($6::text[]) + x.o - 1, $4, x.a, x.t, x.h,"
        " x.d FROM bump b,"
        " unnest($6::text[], $7::float8[], $8::int[], $9::text[])"
        " WITH ORDINALITY AS x(a, t, h, d, o))",
        f" c AS (INSERT INTO {q['commits']}"
        " (thread_id, revision, calls, results, messages, summaries, at, run_id, keys,"
        " effects) SELECT $1, $2 + 1, cardinality($6::text[]), b.result_count,"
        " b.message_count, NULL, $3, $4, $10, $11 FROM bump b)",
    ]
    if keys:
        parts.append(
            f' s AS (INSERT INTO {q["thread_state"]} (thread_id, "key", value)'
            f" SELECT $1, x.k, x.v FROM bump, unnest(${k}::text[], ${v}::text[]) AS x(k, v)"
            ' ON CONFLICT (thread_id, "key") DO UPDATE SET value = excluded.value)'
        )
    if removed:
        parts.append(
            f" d AS (DELETE FROM {q['thread_state']} WHERE thread_id = $1"
            f' AND "key" = ANY(${removed_at}::text[]) AND EXISTS (SELECT 1 FROM bump))'
        )
    if pending:
        i, r, d = pending_at
        parts.append(
            f" p AS (INSERT INTO {q['pending']} (thread_id, seq, item_id, run_id, data)"
            f" SELECT $1, coalesce((SELECT max(seq) + 1 FROM {q['pending']}"
            " WHERE thread_id = $1), 0) + x.o - 1, x.i, x.r, x.d"
            f" FROM bump, unnest(${i}::text[], ${r}::text[], ${d}::text[])"
            " WITH ORDINALITY AS x(i, r, d, o))"
        )
    history = []
    if keys:
        history.append(
            f"SELECT $1, x.k, $2 + 1, x.v FROM bump, unnest(${k}::text[], ${v}::text[]) AS x(k, v)"
        )
    if removed:
        history.append(
            f"SELECT $1, x.k, $2 + 1, NULL FROM bump, unnest(${removed_at}::text[]) AS x(k)"
        )
    if history:
        parts.append(
            f' h AS (INSERT INTO {q["state_history"]} (thread_id, "key", revision, value) '
            + " UNION ALL ".join(history)
            + ")"
        )
    return ",".join(parts) + " SELECT message_count, result_count FROM bump"
