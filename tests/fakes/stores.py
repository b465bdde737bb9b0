"""A fresh thread store of each kind, for tests that run the same case on every store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from network.threads import MemoryStore, SQLStore

STORE_KINDS = ["memory", "sqlite", "postgres"]


async def fresh_thread_store(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Any]:
    """Yield an empty store of `kind` (PostgreSQL: the suite's server, its tables emptied);
    closed after."""
    if kind == "memory":
        yield MemoryStore()
        return
    if kind == "sqlite":
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
