"""`BulkReader`: a thread's records read through the driver itself (SQLite and PostgreSQL) are
the rows a SQLAlchemy query reads, in order and within bounds, in the snapshot of the
transaction reading them; a driver's error leaves as the store's `ThreadStoreError`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from network.errors import ThreadStoreError
from network.threads import DecodedCache, SQLStore
from tests.network.threads.long_thread import build_thread, calls

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_kind", ["sqlite", "postgres"])]


async def test_the_driver_reads_what_sqlalchemy_reads(
    store_kind: str, open_store: Callable[[], Any]
) -> None:
    store: SQLStore = open_store()
    await build_thread(store, "t", 40)  # 120 messages, 40 calls
    t = store.tables
    async with store._reader.begin() as conn:
        for first, end in ((0, 120), (5, 17), (119, 500), (60, 60)):
            texts = await store._bulk.messages(conn, "t", first, end)
            expected = await conn.scalars(
                select(t.messages.c.data)
                .where(t.messages.c.thread_id == "t", t.messages.c.seq >= first)
                .where(t.messages.c.seq < end)
                .order_by(t.messages.c.seq)
            )
            assert list(texts) == list(expected.all())
        rows = await store._bulk.results(conn, "t", 3, 9)
        expected_rows = await conn.execute(
            select(t.results.c.data, t.results.c.history_length, t.results.c.at)
            .where(t.results.c.thread_id == "t", t.results.c.seq >= 3, t.results.c.seq < 9)
            .order_by(t.results.c.seq)
        )
        assert [tuple(row) for row in rows] == [tuple(row) for row in expected_rows.all()]
        assert list(await store._bulk.messages(conn, "absent", 0, 10)) == []


async def test_it_reads_in_the_snapshot_of_its_transaction(
    store_kind: str, open_store: Callable[[], Any]
) -> None:
    store: SQLStore = open_store()
    await build_thread(store, "t", 2)
    async with store._reader.begin() as conn:
        row = (await conn.execute(store._thread_select("t"))).one()  # the snapshot starts
        writer = open_store()
        more = calls(3, start=2)
        more.revision = row.revision
        await writer.append_results("t", more)  # committed after the snapshot began
        texts = await store._bulk.messages(conn, "t", 0, 1000)
        assert len(texts) == row.message_count == 6
    async with SQLStore(store.url, cache=DecodedCache()) as fresh:
        thread = await fresh.get_thread("t")
        assert thread is not None and len(thread.messages) == 15


async def test_a_driver_error_is_the_stores_error(
    store_kind: str, store_url: str, open_store: Callable[[], Any], tmp_path: Path
) -> None:
    if store_kind != "sqlite":
        pytest.skip("the table is dropped from a database file of the test's own")
    store: SQLStore = open_store()
    await build_thread(store, "t", 2)
    with sqlite3.connect(store_url.removeprefix("sqlite+aiosqlite:///")) as db:
        db.execute(f"DROP TABLE {store.tables.messages.name}")
    async with SQLStore(store.url, cache=DecodedCache(), create_tables=False) as fresh:
        with pytest.raises(ThreadStoreError, match="failed in get_thread") as caught:
            await fresh.get_thread("t")
    assert "no such table" in str(caught.value.__cause__)
