"""A budget without caps reclaims the reservation of a process killed mid-request (-9) once
its `hold_seconds` pass, as a capped one does: the next reservation, or a read of the
figures, counts it as spent instead of showing it held for ever. On SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import anyio
import pytest
from sqlalchemy import select

from network import SharedBudget
from network.run.budgets.ledger import Caps, Hold
from network.threads import SQLStore, budget_figures
from network.threads.ledgers import ledger_of

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]
HOLD_SECONDS = 3.0  # long enough to see the hold held, short enough to wait out


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'budgets.db'}"
    return str(request.getfixturevalue("postgres_url"))


async def _killed_holding(database: str, key: str, tmp_path: Path) -> float:
    """Run the child until its request is under way, kill it -9; when its hold expires."""
    hang = tmp_path / "hang"
    command = [sys.executable, "-m", "tests.network.threads.budget_hold_child"]
    started = time.time()
    child = subprocess.Popen(
        [*command, database, key, str(HOLD_SECONDS), str(hang)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120  # a loaded machine takes long to start Python
    while not hang.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the child never made its request"
        await anyio.sleep(0.02)
    reserved = time.time()  # the hold was made between `started` and now
    child.send_signal(signal.SIGKILL)
    child.communicate()
    assert reserved - started < 120
    return reserved + HOLD_SECONDS


async def test_a_read_reclaims_a_dead_processes_hold_as_spent(
    database: str, tmp_path: Path
) -> None:
    key = f"meter:{uuid.uuid4().hex[:8]}"
    expires = await _killed_holding(database, key, tmp_path)
    budget = SharedBudget(key, store=database)
    held = await budget_figures(budget)
    if time.time() < expires - 0.5:  # read before its time: still held
        assert (held.requests, held.held_requests) == (0, 1)
    await anyio.sleep(max(expires - time.time(), 0) + 0.2)
    figures = await budget_figures(budget)
    assert (figures.requests, figures.held_requests, figures.held_tokens) == (1, 0, 0)
    assert figures.tokens == held.held_tokens + held.tokens > 0  # the hold, counted as spent


async def test_the_next_reservation_reclaims_a_dead_processes_hold(
    database: str, tmp_path: Path
) -> None:
    key = f"meter:{uuid.uuid4().hex[:8]}"
    expires = await _killed_holding(database, key, tmp_path)
    await anyio.sleep(max(expires - time.time(), 0) + 0.2)
    async with SQLStore(database) as store:
        ledger = ledger_of(store)
        now = time.time()
        assert await ledger.reserve(key, Hold("h2", 10, 0.0, now + 600), Caps(), now) is None
        budgets = ledger.budgets  # type: ignore[attr-defined]
        async with store.engine.connect() as conn:  # the row as stored, no read's reclaim
            row = (await conn.execute(select(budgets).where(budgets.c.key == key))).one()
    assert (row.requests, row.held_requests, row.held_tokens) == (1, 1, 10)
    assert row.tokens > 0
