"""The two shapes most of the SQL store's tables share (`sql_tables`, `sql_pending`,
`sql_timeline_tables`):

- records of a thread (`thread_records`): numbered from 0 within their thread, the pair
  `(thread_id, seq)` their primary key, each with the run that wrote it: messages, calls,
  summaries, pending calls;
- keyed values (`keyed_values`): one row per key of an owner (a thread; a user of an app; an
  app; a thread's key at a revision), the owner's columns and the key (and the revision)
  their primary key, the value JSON text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, Integer, MetaData, String, Table, Text


def thread_records(metadata: MetaData, name: str, *columns: Any) -> Table:
    """A table of a thread's numbered records: `(thread_id, seq, run_id, *columns)`."""
    return Table(
        name,
        metadata,
        Column("thread_id", String, primary_key=True),
        Column("seq", Integer, primary_key=True),
        Column("run_id", String),
        *columns,
    )


def keyed_values(
    metadata: MetaData,
    name: str,
    *owner: str,
    after_key: Sequence[Column[Any]] = (),
    removable: bool = False,
) -> Table:
    """A table of keyed values: `(*owner, key, *after_key, value)`, all but the value its
    primary key (`owner`: the owner's column names, strings); `removable`: a NULL value says
    the key was removed."""
    return Table(
        name,
        metadata,
        *(Column(column, String, primary_key=True) for column in owner),
        Column("key", String, primary_key=True),
        *after_key,
        Column("value", Text, nullable=removable),
    )
