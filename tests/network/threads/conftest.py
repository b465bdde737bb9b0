"""Fixtures of the thread tests: one store of each kind, and a real PostgreSQL server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from network.threads import MemoryStore, SQLStore, ThreadStore

STORES = ["memory", "sqlite", "postgres"]


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def store_url(store_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """The database URL of this test's store (None for the memory store)."""
    if store_kind == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    if store_kind == "postgres":
        return request.getfixturevalue("postgres_url")
    return None


@pytest.fixture
async def open_store(
    anyio_backend: str, store_url: str | None
) -> AsyncIterator[Callable[[], ThreadStore]]:
    """Opens stores on one database: separate store objects stand for separate processes.

    The database starts empty (PostgreSQL's tables are emptied, since the server is shared).
    """
    opened: list[ThreadStore] = []
    memory = MemoryStore()

    def make() -> ThreadStore:
        store: ThreadStore = memory if store_url is None else SQLStore(store_url)
        opened.append(store)
        return store

    if store_url is not None and store_url.startswith("postgresql"):
        first = make()
        assert isinstance(first, SQLStore)
        await first.setup()
        async with first.engine.begin() as conn:
            for table in reversed(first.tables.all()):
                await conn.execute(table.delete())
    try:
        yield make
    finally:
        for store in opened:
            await store.close()


@pytest.fixture
async def store(open_store: Callable[[], ThreadStore]) -> ThreadStore:
    """A store of each kind: memory, SQLite (a file in tmp_path), PostgreSQL."""
    return open_store()


async def everything_stored(store: Any) -> str:
    """Every byte a store holds, as one text (to look for what must never be there)."""
    if isinstance(store, MemoryStore):
        return repr((store._threads, store._user, store._app))
    from sqlalchemy import select

    parts = []
    async with store.engine.connect() as conn:
        for table in store.tables.all():
            parts.append(repr((await conn.execute(select(table))).all()))
    return "\n".join(parts)
