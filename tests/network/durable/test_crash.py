"""A durable run killed with SIGKILL mid-step, several times, resumes in a new process: no
completed router decision, model call or tool call runs twice, and the outcome is the one
of a run that never crashed."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.network.durable.crash_network import SEQUENCE as KINDS
from tests.network.durable.harness import crash_and_resume, expected_log

SEQUENCE = [f"{kind} go" for kind in KINDS]
SEED = int(os.environ.get("AN_CRASH_SEED", random.randrange(1 << 30)))
UNCRASHED = {
    "output": "writer is done",
    "state": {
        "routed": ["planner", "planner", "writer", "writer"],
        "notes": ["planner wrote this", "writer wrote this"],
        "count": 2,
    },
}


def test_killed_at_random_steps_it_resumes_without_repeating_a_completed_step(
    durable_db: str, tmp_path: Path
) -> None:
    positions = sorted(random.Random(SEED).sample(range(1, len(SEQUENCE) + 1), 3))
    log = tmp_path / "effects.log"
    outcome = crash_and_resume(durable_db, log, positions, sequence=SEQUENCE)
    note = f"killed at {positions} (AN_CRASH_SEED={SEED})"
    assert log.read_text().splitlines() == expected_log(SEQUENCE, positions), note
    assert {key: outcome[key] for key in UNCRASHED} == UNCRASHED, note
    assert outcome["status"] == "SUCCESS"


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
@pytest.mark.parametrize("position", [1, len(SEQUENCE)])
def test_killed_at_the_first_and_the_last_step(
    durable_db: str, tmp_path: Path, position: int
) -> None:
    log = tmp_path / "effects.log"
    outcome = crash_and_resume(durable_db, log, [position])
    assert log.read_text().splitlines() == expected_log(SEQUENCE, [position])
    assert {key: outcome[key] for key in UNCRASHED} == UNCRASHED
