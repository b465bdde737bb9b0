"""Fixtures of the AG-UI server tests on thread stores: stores opened on one database per
test (memory, SQLite, PostgreSQL), and apps of a network on each, or on none."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from network import Network
from network.agui import app
from network.threads import MemoryStore, SQLStore

STORES = ["memory", "sqlite", "postgres"]


@asynccontextmanager
async def _stores(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[], Any]]:
    """Opens stores of `kind` on one database, emptied first (PostgreSQL is the session's):
    each call stands for a new server process. Every store opened is closed at the end."""
    memory = MemoryStore()
    opened: list[Any] = []
    url = None
    if kind == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    elif kind == "postgres":
        url = request.getfixturevalue("postgres_url")
        fresh = SQLStore(url)
        await fresh.setup()
        async with fresh.engine.begin() as conn:
            for table in reversed(fresh.tables.all()):
                await conn.execute(table.delete())
        await fresh.close()

    def make() -> Any:
        store = memory if url is None else SQLStore(url)
        opened.append(store)
        return store

    try:
        yield make
    finally:
        for store in opened:
            await store.close()


@pytest.fixture(params=STORES)
async def make_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[], Any]]:
    """Opens stores on one database: each call stands for a new server process."""
    async with _stores(request.param, request, tmp_path) as make:
        yield make


@pytest.fixture(params=["in-memory", *STORES])
async def make_app(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[Network], Any]]:
    """The AG-UI app of a network, without a store ("in-memory") or on one of the stores."""
    if request.param == "in-memory":
        yield app
        return
    async with _stores(request.param, request, tmp_path) as make:
        yield lambda network: app(network, store=make())
