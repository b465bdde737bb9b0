"""What the SQL store's direct driver paths read and write (`sql_fast_sqlite`,
`sql_fast_postgres`): the same for both databases, so `SQLStore` turns it into a `Thread`, and
its decoded cache, in one place.

A load reads, in one transaction (SQLite) or one statement (PostgreSQL): the thread's row
(with its rewind count, which its cached records are checked by), the messages, calls and
summaries committed after those the process holds (`Hint`), the thread's, its user's and its
app's keys, and the calls it waits on. A commit writes what `CommitWriter` writes, in one
transaction or one statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from network.threads.sql_tables import Tables
from network.threads.thread_data import Commit

Hint = tuple[object, int, int, int] | None
"""What the process holds of a thread: (incarnation, messages, calls, summaries); None: none."""


class Header(NamedTuple):
    """A thread's row, with its rewind count (NULL: never rewound)."""

    thread_id: str
    app_name: str
    user_id: str
    revision: int
    created_at: float
    updated_at: float
    message_count: int
    result_count: int
    meta: str
    rewinds: int | None

    @property
    def incarnation(self) -> tuple[float, int]:
        return (self.created_at, self.rewinds or 0)


def start_at(header: Header, hint: Hint) -> tuple[int, int, int]:
    """Where to read the thread's records from: after what the process holds, when that is
    still a prefix of this incarnation of the thread; else from the start."""
    if hint is None:
        return 0, 0, 0
    incarnation, messages, results, summaries = hint
    if (
        incarnation != header.incarnation
        or messages > header.message_count
        or results > header.result_count
    ):
        return 0, 0, 0
    return messages, results, summaries


@dataclass(slots=True)
class Loaded:
    """A thread as one load read it: its row, and the records from `first` on."""

    header: Header
    first: tuple[int, int, int]  # (messages, calls, summaries) the rows below start at
    messages: Sequence[str] = ()
    results: Sequence[Sequence[Any]] = ()  # (JSON text, history length, time)
    summaries: Sequence[str] = ()
    scopes: tuple[dict[str, str], dict[str, str], dict[str, str]] = field(
        default_factory=lambda: ({}, {}, {})
    )
    waiting: list[str] = field(default_factory=list)  # the pending calls' texts, in order


@dataclass(slots=True)
class Encoded:
    """A commit with its records encoded (done before the transaction: the write lock is
    held only for the writes)."""

    thread_id: str
    commit: Commit
    messages: list[str]
    results: list[dict[str, Any]]  # agent, at, history_length, data
    summaries: list[tuple[int, str]]  # (covers, JSON text)
    now: float


def quoted(tables: Tables, preparer: Any) -> dict[str, str]:
    """Every table's name, quoted for the dialect, by its short name."""
    named = {
        "threads": tables.threads,
        "messages": tables.messages,
        "results": tables.results,
        "summaries": tables.summaries,
        "thread_state": tables.thread_state,
        "user_state": tables.user_state,
        "app_state": tables.app_state,
        "pending": tables.pending,
        "commits": tables.timeline.commits,
        "state_history": tables.timeline.state_history,
        "lineage": tables.timeline.lineage,
    }
    return {short: preparer.format_table(table) for short, table in named.items()}
