"""A durable run's replay never reserves twice on a shared budget: the reservation is made
inside the recorded model step, so a replayed step returns its answer and reserves nothing;
only the request that was in flight when the process died is made (and reserved) again."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from network import SharedBudget
from network.threads import budget_figures
from tests.network.durable.crash_network import SEQUENCE as KINDS
from tests.network.durable.harness import crash_and_resume, expected_log

BUDGET_KEY = "durable:team"  # budget_child's
SEQUENCE = [f"{kind} go" for kind in KINDS]
SECOND_MODEL_CALL = 5  # 1-based: router, model:planner, tool:note, router, model:planner
assert KINDS[SECOND_MODEL_CALL - 1] == "model:planner"


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_a_replayed_model_step_reserves_nothing(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(tmp_path / "budgets.db")
    monkeypatch.setenv("AN_BUDGET_STORE", store)
    log = tmp_path / "effects.log"
    outcome = crash_and_resume(
        durable_db, log, [SECOND_MODEL_CALL], "tests.network.durable.budget_child"
    )
    assert outcome["status"] == "SUCCESS"
    done = log.read_text().splitlines()
    assert done == expected_log(SEQUENCE, [SECOND_MODEL_CALL])
    made = [line for line in done if line.startswith("model:")]
    assert len(made) == 5  # four requests, the one in flight at the kill made twice
    budget = SharedBudget(BUDGET_KEY, store=store)
    figures = anyio.run(lambda: budget_figures(budget))
    # the first request settled before the kill; after the resume, its replay reserved
    # nothing, and the three requests made then settled: 4. The killed process's hold is
    # held until its hold_seconds (1 s) pass, then counted as spent: 5 reservations in all.
    assert figures.requests + figures.held_requests == 5
    time.sleep(1.1)
    figures = anyio.run(lambda: budget_figures(budget))
    assert (figures.requests, figures.held_requests) == (5, 0)
