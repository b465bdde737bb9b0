"""The task store beside a thread store (`network.a2a.tasks`)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from network.a2a.tasks import task_store_for
from network.threads.resolve import open_store

pytestmark = pytest.mark.anyio


async def test_the_task_store_on_an_sql_store_warns_nothing(tmp_path: Path) -> None:
    # The SDK declares its task model again under the name its module already used, and
    # SQLAlchemy warned so on stderr at every `serve --a2a --store` start (once per process)
    store, _ = open_store(str(tmp_path / "threads.db"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            task_store_for(store)
    finally:
        await store.close()
