"""A run's load and commits on SQLite, each one transaction run whole on a connection's own
thread (`sql_links.SQLiteLink`): one hand-off per transaction, however many statements. A
load is a whole transaction; a write (a commit, a thread's creation, a lease claimed with the
read) is the body the link's writer runs between `BEGIN IMMEDIATE` and COMMIT, with other
writes queued beside it (group commit).

The statements are `CommitWriter`'s (`sql_commit`, `sql_pending`, `sql_timeline`), written for
`sqlite3`: the revision checked and bumped by one `UPDATE ... RETURNING` under the write lock
`BEGIN IMMEDIATE` took, each table's rows inserted by one multi-row `INSERT`, claims of
pending calls judged before the revision, an append-only commit refused while the thread waits
on a call or holds one of its messages' ids. A commit with `user:` / `app:` writes takes
`CommitWriter`'s path instead: their merge handlers are the application's code, and run on
the event loop, not on a worker thread.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from network.errors import StaleThreadError
from network.threads.pending import PendingCall, waiting_error
from network.threads.protocol import ThreadExistsError, ThreadNotFoundError
from network.threads.sql_fast import Encoded, Header, Hint, Loaded, quoted, start_at
from network.threads.sql_message_ids import check_sqlite
from network.threads.sql_pending import refuse_claims
from network.threads.sql_tables import Tables
from network.threads.sqlite_workers import Write
from network.threads.timeline import commit_effects, commit_keys

T = TypeVar("T")
_MAX_VARIABLES = 900  # bound parameters per statement (SQLite before 3.32 allows 999)


def in_transaction(
    connection: sqlite3.Connection, begin: str, body: Callable[[sqlite3.Connection], T]
) -> T:
    """`body` between `begin` and COMMIT; rolled back when anything fails."""
    result: T = Write(body, begin, durable=True).alone(connection)
    return result


def insert_rows(connection: sqlite3.Connection, prefix: str, rows: Sequence[Sequence[Any]]) -> None:
    """`prefix` ("INSERT INTO t (a, b) VALUES ") with every row, as few statements as SQLite's
    limit on bound parameters allows."""
    if not rows:
        return
    width = len(rows[0])
    group = "(" + ",".join("?" * width) + ")"
    per = max(1, _MAX_VARIABLES // width)
    for start in range(0, len(rows), per):
        chunk = rows[start : start + per]
        values = [value for row in chunk for value in row]
        connection.execute(prefix + ",".join([group] * len(chunk)), values)


class SQLiteFast:
    """The load and commit statements of one store's tables, for `sqlite3`."""

    def __init__(self, tables: Tables, preparer: Any) -> None:
        q = quoted(tables, preparer)
        self._reading(q)
        self._writing(q)
        self._waiting(q)

    def _reading(self, q: dict[str, str]) -> None:
        """The load's statements (`q`: the tables' quoted names)."""
        self.header = (
            "SELECT t.thread_id, t.app_name, t.user_id, t.revision, t.created_at, t.updated_at,"
            f" t.message_count, t.result_count, t.meta, l.rewinds FROM {q['threads']} t"
            f" LEFT JOIN {q['lineage']} l ON l.thread_id = t.thread_id WHERE t.thread_id = ?"
        )
        self.messages = (
            f"SELECT data FROM {q['messages']} WHERE thread_id = ? AND seq >= ? AND seq < ?"
            " ORDER BY seq"
        )
        self.results = (
            f"SELECT data, history_length, at FROM {q['results']}"
            " WHERE thread_id = ? AND seq >= ? AND seq < ? ORDER BY seq"
        )
        self.scopes = (
            f'SELECT 0, "key", value FROM {q["thread_state"]} WHERE thread_id = ?'
            f' UNION ALL SELECT 1, "key", value FROM {q["user_state"]}'
            " WHERE app_name = ? AND user_id = ?"
            f' UNION ALL SELECT 2, "key", value FROM {q["app_state"]} WHERE app_name = ?'
            f" UNION ALL SELECT 3, seq, data FROM {q['pending']}"
            " WHERE thread_id = ? AND answer IS NULL"
            f" UNION ALL SELECT 4, seq, data FROM {q['summaries']} WHERE thread_id = ? AND seq >= ?"
        )
        self.revision = f"SELECT revision FROM {q['threads']} WHERE thread_id = ?"

    def _writing(self, q: dict[str, str]) -> None:
        """A new thread's and a commit's statements."""
        self.create = (
            f"INSERT INTO {q['threads']} (thread_id, app_name, user_id, revision, created_at,"
            " updated_at, message_count, result_count, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (thread_id) DO NOTHING RETURNING thread_id"
        )
        self.bump = (
            f"UPDATE {q['threads']} SET revision = revision + 1, updated_at = ?,"
            " message_count = message_count + ?, result_count = result_count + ?"
            " WHERE thread_id = ? AND revision = ?"
            " RETURNING app_name, user_id, message_count, result_count"
        )
        self.messages_table = q["messages"]
        self.add_messages = f"INSERT INTO {q['messages']} (thread_id, seq, run_id, data) VALUES "
        self.add_results = (
            f"INSERT INTO {q['results']} (thread_id, seq, run_id, agent, at, history_length,"
            " data) VALUES "
        )
        self.next_summary = (
            f"SELECT coalesce(max(seq) + 1, 0) FROM {q['summaries']} WHERE thread_id = ?"
        )
        self.add_summaries = (
            f"INSERT INTO {q['summaries']} (thread_id, seq, run_id, covers, data) VALUES "
        )
        self.set_state = f'INSERT INTO {q["thread_state"]} (thread_id, "key", value) VALUES '
        self.on_conflict = ' ON CONFLICT (thread_id, "key") DO UPDATE SET value = excluded.value'
        self.remove_state = f'DELETE FROM {q["thread_state"]} WHERE thread_id = ? AND "key" IN '
        self.add_commit = (
            f"INSERT INTO {q['commits']} (thread_id, revision, calls, results, messages,"
            " summaries, at, run_id, keys, effects) VALUES "
        )
        self.add_values = (
            f'INSERT INTO {q["state_history"]} (thread_id, "key", revision, value) VALUES '
        )
        # a thread a claim created, removed while still as created (a refused request's)
        self.drop = (
            f"DELETE FROM {q['threads']} WHERE thread_id = ? AND revision = ? RETURNING thread_id"
        )
        self.drop_records = [
            f"DELETE FROM {q[table]} WHERE thread_id = ?" for table in ("messages", "commits")
        ]

    def _waiting(self, q: dict[str, str]) -> None:
        """The statements on the calls a thread waits on: read, claimed, added."""
        self.waiting = (
            f"SELECT data FROM {q['pending']} WHERE thread_id = ? AND answer IS NULL ORDER BY seq"
        )
        self.claim = (
            f"UPDATE {q['pending']} SET answer = ?, answered_by = ?"
            " WHERE thread_id = ? AND item_id = ? AND answer IS NULL RETURNING seq"
        )
        self.claim_states = (
            f"SELECT item_id, answer IS NULL, answered_by, answer FROM {q['pending']}"
            " WHERE thread_id = ? AND item_id IN "
        )
        self.next_pending = (
            f"SELECT coalesce(max(seq) + 1, 0) FROM {q['pending']} WHERE thread_id = ?"
        )
        self.add_pending = (
            f"INSERT INTO {q['pending']} (thread_id, seq, item_id, run_id, data) VALUES "
        )

    # -- reading -------------------------------------------------------------------------------

    def load(self, thread_id: str, hint: Hint) -> Callable[[sqlite3.Connection], Loaded | None]:
        """The read of a thread, as a transaction to run on a connection's thread."""

        def read(connection: sqlite3.Connection) -> Loaded | None:
            row = connection.execute(self.header, (thread_id,)).fetchone()
            return None if row is None else self.read_records(connection, Header(*row), hint)

        return lambda connection: in_transaction(connection, "BEGIN", read)

    def read_records(self, connection: sqlite3.Connection, header: Header, hint: Hint) -> Loaded:
        """The rest of a thread whose row (`header`) was just read in this transaction."""
        thread_id = header.thread_id
        m, r, n = start_at(header, hint)
        loaded = Loaded(header, (m, r, n))
        if m < header.message_count:
            found = connection.execute(self.messages, (thread_id, m, header.message_count))
            loaded.messages = [data for (data,) in found]
        if r < header.result_count:
            found = connection.execute(self.results, (thread_id, r, header.result_count))
            loaded.results = found.fetchall()
        owner = (thread_id, header.app_name, header.user_id, header.app_name)
        rows = connection.execute(self.scopes, (*owner, thread_id, thread_id, n)).fetchall()
        waiting: list[tuple[int, str]] = []
        summaries: list[tuple[int, str]] = []
        for scope, key, value in rows:
            if scope < 3:
                loaded.scopes[scope][key] = value
            elif scope == 3:
                waiting.append((key, value))
            else:
                summaries.append((key, value))
        loaded.waiting = [text for _, text in sorted(waiting)]
        loaded.summaries = [text for _, text in sorted(summaries)]
        return loaded

    def claim_reading(
        self, claim: str, arguments: Sequence[Any], app: str, user: str, hint: Hint
    ) -> Callable[[sqlite3.Connection], tuple[bool, bool, bool, Loaded | None]]:
        """A thread's run lease claimed by the statement `claim` (`sql_leases`) unless the
        thread is another app's or user's, and the thread read when the lease was taken: the
        body of one write transaction (under the write lock, so what is read is what the lease
        protects). Returns (taken, foreign, existed, loaded)."""

        def run(c: sqlite3.Connection) -> tuple[bool, bool, bool, Loaded | None]:
            row = c.execute(self.header, (arguments[0],)).fetchone()
            header = None if row is None else Header(*row)
            if header is not None and (header.app_name != app or header.user_id != user):
                return False, True, True, None
            if not c.execute(claim, tuple(arguments)).fetchall():
                return False, False, header is not None, None
            if header is None:
                return True, False, False, None
            return True, False, True, self.read_records(c, header, hint)

        return run

    def claim_creating(
        self,
        claim: str,
        arguments: Sequence[Any],
        app: str,
        user: str,
        hint: Hint,
        values: Sequence[Any],
        first: Encoded,
    ) -> Callable[[sqlite3.Connection], tuple[bool, bool, bool, Loaded | None, bool]]:
        """`claim_reading`, and a thread it finds missing created (its row `values`) holding
        `first` (a served run's input) once the lease is taken, all in one write transaction:
        under the write lock, nobody creates it in between. Returns (taken, foreign, existed,
        loaded, created)."""
        reading = self.claim_reading(claim, arguments, app, user, hint)
        creating = self.create_reading(values, first)

        def run(c: sqlite3.Connection) -> tuple[bool, bool, bool, Loaded | None, bool]:
            taken, foreign, existed, loaded = reading(c)
            if taken and not existed:
                return True, False, False, creating(c), True
            return taken, foreign, existed, loaded, False

        return run

    def drop_created(
        self, thread_id: str, revision: int, release: str, holder: str
    ) -> Callable[[sqlite3.Connection], bool]:
        """A thread a claim created removed when it is still at `revision` (nothing committed
        on it since: only its row, its messages and its checkpoint exist), and the lease
        released by the statement `release` (`sql_leases`): one write transaction's body;
        whether the thread was removed."""

        def run(c: sqlite3.Connection) -> bool:
            dropped = c.execute(self.drop, (thread_id, revision)).fetchone() is not None
            if dropped:
                for sql in self.drop_records:
                    c.execute(sql, (thread_id,))
            c.execute(release, (thread_id, holder))
            return dropped

        return run

    def create_thread(self, values: Sequence[Any]) -> Callable[[sqlite3.Connection], None]:
        """The insert of a new thread's row (a write transaction's body); `ThreadExistsError`
        when the id is taken."""

        def create(connection: sqlite3.Connection) -> None:
            if connection.execute(self.create, tuple(values)).fetchone() is None:
                raise ThreadExistsError(f"thread {values[0]!r} already exists")

        return create

    def create_reading(
        self, values: Sequence[Any], first: Encoded | None = None
    ) -> Callable[[sqlite3.Connection], Loaded]:
        """The insert of a new thread's row (`ThreadExistsError` when the id is taken), its
        `first` commit applied to it (messages only: a served run's input), and the thread
        read back (its user's and app's keys): one write transaction's body."""

        bare = Header._make([*values, None])
        header = bare
        if first is not None:  # the row as its first commit leaves it (no bump after)
            header = bare._replace(
                revision=first.commit.revision + 1,
                updated_at=first.now,
                message_count=len(first.messages),
            )
            keys = json.dumps(commit_keys(first.commit))
            effects = commit_effects(first.commit)

        def create(connection: sqlite3.Connection) -> Loaded:
            if connection.execute(self.create, tuple(header[:9])).fetchone() is None:
                raise ThreadExistsError(f"thread {values[0]!r} already exists")
            loaded = self.read_records(connection, bare, None)  # keys: nothing else yet
            if first is not None:  # its messages are what was just written: not read back
                self._add_records(connection, first, 0, 0)
                counts = (0, 0, header.message_count, None)
                self._record(connection, first, header.revision, counts, keys, effects)
                loaded.header = header
                loaded.messages = first.messages
            return loaded

        return create

    # -- writing -------------------------------------------------------------------------------

    def commit(self, encoded: Encoded) -> Callable[[sqlite3.Connection], tuple[int, ...]]:
        """The commit as a write transaction's body: returns the new revision and the
        sequence numbers its first message, call and summary got."""
        keys = json.dumps(commit_keys(encoded.commit))
        effects = commit_effects(encoded.commit)
        return lambda connection: self._write(connection, encoded, keys, effects)

    def _write(
        self, c: sqlite3.Connection, encoded: Encoded, keys: str, effects: str | None
    ) -> tuple[int, ...]:
        commit, thread_id = encoded.commit, encoded.thread_id
        revision = commit.revision
        if commit.append_only:
            revision = self._appendable(c, thread_id)
            check_sqlite(c, self.messages_table, thread_id, commit.messages)
        if commit.answered:  # before the revision: a second answer is told it came second
            self._claim(c, thread_id, commit.answered, commit.run_id)
        messages, results = encoded.messages, encoded.results
        bumped = c.execute(
            self.bump, (encoded.now, len(messages), len(results), thread_id, revision)
        ).fetchone()
        if bumped is None:
            self._refuse(c, thread_id, revision)
        _app, _user, message_count, result_count = bumped
        first_message = message_count - len(messages)
        first_result = result_count - len(results)
        self._add_records(c, encoded, first_message, first_result)
        first_summary, held = self._add_summaries(c, encoded)
        new_revision = revision + 1
        self._write_keys(c, encoded, new_revision)
        counts = (len(results), result_count, message_count, held)
        self._record(c, encoded, new_revision, counts, keys, effects)
        return new_revision, first_message, first_result, first_summary

    def _add_records(
        self, c: sqlite3.Connection, encoded: Encoded, first_message: int, first_result: int
    ) -> None:
        """The commit's messages and calls, numbered from the first ones the bump left."""
        thread_id, run_id = encoded.thread_id, encoded.commit.run_id
        insert_rows(
            c,
            self.add_messages,
            [
                (thread_id, first_message + i, run_id, data)
                for i, data in enumerate(encoded.messages)
            ],
        )
        insert_rows(
            c,
            self.add_results,
            [
                (thread_id, first_result + i, run_id, *_call_row(values))
                for i, values in enumerate(encoded.results)
            ],
        )

    def _add_summaries(self, c: sqlite3.Connection, encoded: Encoded) -> tuple[int, int | None]:
        """The commit's summaries, numbered after the thread's last one: the first one's number,
        and how many the thread then holds (None when the commit adds none)."""
        if not encoded.summaries:
            return 0, None
        thread_id, run_id = encoded.thread_id, encoded.commit.run_id
        first: int = c.execute(self.next_summary, (thread_id,)).fetchone()[0]
        insert_rows(
            c,
            self.add_summaries,
            [
                (thread_id, first + i, run_id, covers, data)
                for i, (covers, data) in enumerate(encoded.summaries)
            ],
        )
        return first, first + len(encoded.summaries)

    def _write_keys(self, c: sqlite3.Connection, encoded: Encoded, new_revision: int) -> None:
        """The thread keys the commit set and removed, and the calls it stopped on."""
        commit, thread_id = encoded.commit, encoded.thread_id
        if commit.state:
            self._upsert_state(c, [(thread_id, key, value) for key, value in commit.state.items()])
        if commit.removed:
            removed = list(commit.removed)
            marks = ",".join("?" * len(removed))
            c.execute(f"{self.remove_state}({marks})", (thread_id, *removed))
        if commit.pending:
            first = c.execute(self.next_pending, (thread_id,)).fetchone()[0]
            insert_rows(
                c,
                self.add_pending,
                [
                    (thread_id, first + i, entry.id, entry.run_id, entry.to_text(new_revision))
                    for i, entry in enumerate(commit.pending)
                ],
            )

    def _record(
        self,
        c: sqlite3.Connection,
        encoded: Encoded,
        new_revision: int,
        counts: tuple[int, int, int, int | None],
        keys: str,
        effects: str | None,
    ) -> None:
        """The commit's checkpoint: its row (`counts`: calls it added, calls, messages and
        summaries the thread then holds) and each key's new value."""
        commit, thread_id, run_id = encoded.commit, encoded.thread_id, encoded.commit.run_id
        row = (thread_id, new_revision, *counts, encoded.now, run_id, keys, effects)
        insert_rows(c, self.add_commit, [row])
        values: list[tuple[str, str, int, str | None]] = [
            (thread_id, key, new_revision, value) for key, value in commit.state.items()
        ]
        values.extend((thread_id, key, new_revision, None) for key in commit.removed)
        insert_rows(c, self.add_values, values)

    def _upsert_state(self, c: sqlite3.Connection, rows: list[tuple[str, str, str]]) -> None:
        per = _MAX_VARIABLES // 3
        for start in range(0, len(rows), per):
            chunk = rows[start : start + per]
            values = [value for row in chunk for value in row]
            groups = ",".join(["(?,?,?)"] * len(chunk))
            c.execute(self.set_state + groups + self.on_conflict, values)

    def _appendable(self, c: sqlite3.Connection, thread_id: str) -> int:
        """The revision an append-only commit goes on; refused while the thread waits."""
        found = c.execute(self.revision, (thread_id,)).fetchone()
        if found is None:
            raise ThreadNotFoundError(f"thread {thread_id!r} does not exist (deleted?)")
        waiting = [PendingCall.from_text(data) for (data,) in c.execute(self.waiting, (thread_id,))]
        if waiting:
            raise waiting_error(thread_id, waiting)
        revision: int = found[0]
        return revision

    def _claim(
        self, c: sqlite3.Connection, thread_id: str, answered: dict[str, str], run_id: str | None
    ) -> None:
        failed = [
            item
            for item, answer in answered.items()
            if c.execute(self.claim, (answer, run_id, thread_id, item)).fetchone() is None
        ]
        if not failed:
            return
        marks = ",".join("?" * len(failed))
        rows = c.execute(f"{self.claim_states}({marks})", (thread_id, *failed)).fetchall()
        refuse_claims(thread_id, failed, rows)

    def _refuse(self, c: sqlite3.Connection, thread_id: str, expected: int) -> Any:
        found = c.execute(self.revision, (thread_id,)).fetchone()
        if found is None:
            raise ThreadNotFoundError(f"thread {thread_id!r} does not exist (deleted?)")
        raise StaleThreadError(
            f"thread {thread_id!r} is at revision {found[0]}, but this run loaded revision "
            f"{expected}: another run committed to it meanwhile",
            thread_id=thread_id,
            expected=expected,
            found=found[0],
        )


def _call_row(values: dict[str, Any]) -> tuple[Any, ...]:
    """A stored call's columns after its thread, number and run: agent, time, history
    length, JSON text."""
    return values["agent"], values["at"], values["history_length"], values["data"]
