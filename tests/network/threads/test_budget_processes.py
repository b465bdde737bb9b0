"""N processes running M concurrent runs against one shared budget never spend past it, on
PostgreSQL and SQLite: every request reserves in one conditional statement before it is
sent, so the processes together stop at the cap; every answered request is settled once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import anyio
import pytest

from network import SharedBudget
from network.threads import budget_figures

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]
PROCESSES = 4
RUNS = 5  # at once, in each process
CAP = 6000  # tokens: 60 requests of 100, of the 120 the runs would make


@pytest.fixture(params=["postgres", "sqlite"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'budgets.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


async def test_processes_together_never_spend_past_the_budget(
    database: str, tmp_path: Path
) -> None:
    key = f"tenant:{uuid.uuid4().hex[:8]}"
    log = tmp_path / "requests.log"
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "tests.network.threads.budget_child", database, key]
    children = [
        subprocess.Popen(
            [*command, str(CAP), str(RUNS), str(log)],
            env={**os.environ, "PYTHONPATH": path},
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(PROCESSES)
    ]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("requests.log.ready.*"))) < PROCESSES:
        assert time.monotonic() < deadline, "the children never got ready"
        assert all(child.poll() is None for child in children), "a child died"
        await anyio.sleep(0.02)
    (tmp_path / "requests.log.go").touch()  # all at once
    counts = {"finished": 0, "refused": 0}
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err.decode()
        for name, value in json.loads(out).items():
            counts[name] += value
    answered = log.read_text().splitlines()
    # several processes made requests against the one budget (all of them, usually; on a
    # loaded machine one may wake to the go after the others spent the cap, which is no
    # failure of the budget's)
    assert len(set(answered)) >= 2
    spent = 100 * len(answered)
    assert spent <= CAP  # together, never past the budget
    assert spent >= CAP // 2  # and the budget was used, not refused from the start
    assert counts["refused"] > 0 and counts["finished"] + counts["refused"] == PROCESSES * RUNS
    figures = await budget_figures(SharedBudget(key, store=database))
    # each answered request settled once: the ledger's figures are the log's
    assert (figures.tokens, figures.requests) == (spent, len(answered))
    assert (figures.held_tokens, figures.held_requests) == (0, 0)
