"""The thread stores a recording is kept in: memory, an SQLite file and the suite's
PostgreSQL server (see `stores.read_back` for reading one back cold)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from network.threads import MemoryStore, SQLStore


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield MemoryStore()
        return
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    opened = SQLStore(url)
    await opened.setup()
    async with opened.engine.begin() as conn:
        for table in reversed(opened.tables.all()):
            await conn.execute(table.delete())
    yield opened
    await opened.close()
