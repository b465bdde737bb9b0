"""The thread stores a recording is kept in: memory, an SQLite file and the suite's
PostgreSQL server (see `stores.read_back` for reading one back cold)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.stores import STORE_KINDS, fresh_thread_store


@pytest.fixture(params=STORE_KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    async for opened in fresh_thread_store(request.param, tmp_path, request):
        yield opened
