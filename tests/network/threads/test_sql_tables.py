"""The SQL store's tables (`network.threads.sql_tables`): no index of the threads table holds a
column a commit changes (a commit rewrites the thread's row, never one of its index entries),
the calls are indexed by their key only (no index a commit writes and no query reads), and a
database an older version made, whose owner index held `updated_at` and whose calls were
indexed by time, is brought up to date on first use, its threads still listed newest first."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import inspect

from network.threads import SQLStore
from network.threads.decoded import DecodedCache
from tests.network.threads.test_conformance import commit_exchange

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_kind", ["sqlite", "postgres"])]

NEVER_CHANGED = {"thread_id", "app_name", "user_id"}  # what a commit leaves in a thread's row


async def threads_indexes(store: SQLStore, name: str | None = None) -> dict[str, list[str]]:
    """Every index of the store's threads table (or of the table `name`) but its primary
    key's: its name, its columns."""
    name = name or store.tables.threads.name

    def read(connection: Any) -> dict[str, list[str]]:
        found = inspect(connection).get_indexes(name)
        return {index["name"]: list(index["column_names"]) for index in found}

    async with store.engine.connect() as conn:
        return await conn.run_sync(read)


async def test_no_index_of_the_threads_table_holds_what_a_commit_changes(
    store_url: str,
) -> None:
    store = SQLStore(store_url)
    try:
        await store.setup()
        indexes = await threads_indexes(store)
    finally:
        await store.close()
    assert indexes, "the threads are indexed by owner"
    for name, columns in indexes.items():
        assert set(columns) <= NEVER_CHANGED, (name, columns)


async def test_the_calls_are_indexed_by_their_key_only(store_url: str) -> None:
    """Every commit writes its calls' index entries: one on their time was written by each
    and read by no query (`get_results(after=...)` picks them from the decoded rows)."""
    store, cold = SQLStore(store_url), SQLStore(store_url, cache=DecodedCache())
    thread = f"calls-{time.time_ns()}"
    try:
        await store.setup()
        indexes = await threads_indexes(store, store.tables.results.name)
        await store.create_thread(thread, app_name="app")
        await commit_exchange(store, thread, 0, "one")
        time.sleep(0.002)
        cutoff = time.time()
        time.sleep(0.002)
        await commit_exchange(store, thread, 1, "two")
        later = await cold.get_results(thread, after=cutoff)
    finally:
        await store.close()
        await cold.close()
    assert indexes == {}
    assert later is not None and [r.output[0].content for r in later] == ["two"]


async def test_an_older_databases_owner_index_is_replaced_on_first_use(store_url: str) -> None:
    older = SQLStore(store_url)
    threads = older.tables.threads.name
    prefix = threads.removesuffix("threads")
    try:
        await older.setup()
        async with older.engine.begin() as conn:  # the tables as the older version made them
            await conn.exec_driver_sql(f"DROP INDEX {prefix}threads_by_owner")
            await conn.exec_driver_sql(
                f"CREATE INDEX {prefix}threads_owner ON {threads} (app_name, user_id, updated_at)"
            )
            await conn.exec_driver_sql(
                f"CREATE INDEX {prefix}results_at ON {prefix}results (thread_id, at)"
            )
            await conn.exec_driver_sql(f"DELETE FROM {threads}")
        for name in ("first", "second", "third"):
            await older.create_thread(name, app_name="notes", user_id="ada")
            time.sleep(0.002)  # distinct update times
        assert f"{prefix}threads_owner" in await threads_indexes(older)
    finally:
        await older.close()

    store = SQLStore(store_url)
    try:
        listed = await store.list_threads(app_name="notes", user_id="ada")
        indexes = await threads_indexes(store)
        calls = await threads_indexes(store, store.tables.results.name)
    finally:
        await store.close()
    assert [info.thread_id for info in listed] == ["third", "second", "first"]
    assert calls == {}
    assert f"{prefix}threads_owner" not in indexes
    assert indexes[f"{prefix}threads_by_owner"] == ["app_name", "user_id"]
