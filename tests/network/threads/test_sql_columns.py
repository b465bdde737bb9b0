"""The shapes the SQL store's tables share (`network.threads.sql_columns`): a thread's
numbered records and keyed values, with the primary keys the store's reads rely on."""

from __future__ import annotations

from sqlalchemy import Column, Integer, MetaData, Text

from network.threads.sql_columns import keyed_values, thread_records
from network.threads.sql_tables import build_tables


def primary_key(table: object) -> list[str]:
    return [column.name for column in table.primary_key.columns]  # type: ignore[attr-defined]


def test_a_threads_records_are_numbered_within_it_with_the_run_that_wrote_them() -> None:
    table = thread_records(MetaData(), "notes", Column("data", Text, nullable=False))
    assert [c.name for c in table.columns] == ["thread_id", "seq", "run_id", "data"]
    assert primary_key(table) == ["thread_id", "seq"]
    assert table.c.run_id.nullable and not table.c.data.nullable


def test_keyed_values_are_keyed_by_their_owner_then_the_key() -> None:
    users = keyed_values(MetaData(), "users", "app_name", "user_id")
    assert primary_key(users) == ["app_name", "user_id", "key"]
    assert not users.c.value.nullable
    history = keyed_values(
        MetaData(),
        "history",
        "thread_id",
        after_key=[Column("revision", Integer, primary_key=True)],
        removable=True,
    )
    # (thread, key, revision): a key's last value at a revision is one index range
    assert primary_key(history) == ["thread_id", "key", "revision"]
    assert history.c.value.nullable


def test_the_stores_tables_take_these_shapes() -> None:
    tables = build_tables("p_")
    for table in (tables.messages, tables.results, tables.summaries):
        assert primary_key(table) == ["thread_id", "seq"]
    assert primary_key(tables.thread_state) == ["thread_id", "key"]
    assert primary_key(tables.app_state) == ["app_name", "key"]
    assert primary_key(tables.timeline.state_history) == ["thread_id", "key", "revision"]
