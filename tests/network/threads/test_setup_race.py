"""Several OS processes opening one fresh PostgreSQL database at once each create the tables
they need on first use (the thread store's, the A2A task records'): they take turns, and
none fails on the catalog's duplicate names (tested by starting six at the same instant)."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

ROOT = Path(__file__).resolve().parents[3]
SET_UP_TOGETHER = """
import sys, time, anyio
from network.a2a.tasks import TaskRecords, task_store_for
from network.threads import SQLStore

async def main() -> None:
    url, name, start_at = sys.argv[1], sys.argv[2], float(sys.argv[3])
    async with SQLStore(url) as store:
        records = TaskRecords("app", task_store_for(store))
        time.sleep(max(0.0, start_at - time.time()))  # all at once
        await store.setup()
        await store.create_thread(name, app_name="app")
        await records.setup()

anyio.run(main)
"""


@pytest.fixture
def fresh_database(postgres_url: str) -> Iterator[str]:
    """A database of its own on the suite's server, with no tables in it yet."""
    name = f"race_{uuid.uuid4().hex[:10]}"

    async def run(statement: str) -> None:
        engine = create_async_engine(postgres_url, isolation_level="AUTOCOMMIT")
        async with engine.connect() as conn:
            await conn.execute(text(statement))
        await engine.dispose()

    anyio.run(run, f"CREATE DATABASE {name}")
    yield make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    anyio.run(run, f"DROP DATABASE {name} WITH (FORCE)")


def test_processes_that_start_together_create_the_tables_once(fresh_database: str) -> None:
    start_at = str(time.time() + 8)  # after every process has imported the library
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", SET_UP_TOGETHER, fresh_database, f"t{n}", start_at],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(6)
    ]
    errors = [process.communicate(timeout=120)[1] for process in processes]
    assert [process.returncode for process in processes] == [0] * 6, errors
