"""The SQL store's time-travel tables, beside the thread tables (`sql_tables`).

- `commits`: one row per commit of a thread (a `Mark`): its revision, how many calls it added,
  how many calls, messages and summaries the thread then held (summaries: NULL when the commit
  added none), when, by which run, the keys it wrote (a JSON list), and its calls' tool calls
  and shared-key writes (`effects`, JSON; NULL when none: what a fork's or rewind's report
  lists, without decoding a call). Keyed by (thread, revision) alone: the calls count never
  falls as the revision rises (a rewind cuts the commits after its checkpoint and records
  itself at the checkpoint's count), so the commit that saved call `i` is the thread's first
  with more than `i` calls in revision order, found by bisecting the revisions on the primary
  key (`sql_timeline`): an index on the count (`commits_results`, which older versions kept)
  cost every commit a b-tree page on SQLite and an index entry on PostgreSQL for one lookup
  of time travel. On SQLite a `WITHOUT ROWID` table: its rows (small:
  counts, the keys' names, the calls' tool names and ids) are kept in the primary key's
  b-tree, not in a table beside an index of it (one b-tree written per commit, not two).
- `state_history`: every value each thread key took, by revision (NULL: removed); its primary
  key (thread, key, revision) answers "each key's last value at revision R" from the index.
- `lineage`: where a thread came from (a fork, or a rewind's keeping) and how often it was
  rewound (what tells a process's cached records of the thread that they are stale).

All three start empty on a database made before them: calls committed before then have no
checkpoint (reading one is a clear `TimeTravelError`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Column, Double, Integer, MetaData, String, Table, Text

from network.threads.sql_columns import keyed_values


@dataclass(frozen=True, slots=True)
class TimelineTables:
    """The time-travel tables of one store."""

    commits: Table
    state_history: Table
    lineage: Table

    def all(self) -> list[Table]:
        """Every table, in creation order."""
        return [self.commits, self.state_history, self.lineage]


def build_timeline_tables(metadata: MetaData, prefix: str) -> TimelineTables:
    """Define the tables on `metadata`, each name starting with `prefix`."""
    commits = Table(
        f"{prefix}commits",
        metadata,
        Column("thread_id", String, primary_key=True),
        Column("revision", Integer, primary_key=True),
        Column("calls", Integer, nullable=False),
        Column("results", Integer, nullable=False),
        Column("messages", Integer, nullable=False),
        Column("summaries", Integer),
        Column("at", Double, nullable=False),
        Column("run_id", String),
        Column("keys", Text, nullable=False),
        Column("effects", Text),
        sqlite_with_rowid=False,
    )
    state_history = keyed_values(
        metadata,
        f"{prefix}state_history",
        "thread_id",
        after_key=[Column("revision", Integer, primary_key=True)],
        removable=True,
    )
    lineage = Table(
        f"{prefix}lineage",
        metadata,
        Column("thread_id", String, primary_key=True),
        Column("parent_thread_id", String),
        Column("checkpoint", Integer),
        Column("kind", String),
        Column("at", Double),
        Column("rewinds", Integer, nullable=False),
    )
    return TimelineTables(commits, state_history, lineage)
