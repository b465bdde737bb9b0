"""A durable run routed by `sequence`, killed with SIGKILL mid-run, goes on where it was when
resumed: the router keeps no place of its own and reads it from the calls the replay
restored, so no agent runs again from the start and none is skipped (a `Parallel` fan-out
counts as one place)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.network.durable.harness import crash_and_resume, expected_log
from tests.network.durable.sequence_network import SEQUENCE as KINDS

CHILD = "tests.network.durable.sequence_child"
SEQUENCE = [f"{kind} go" for kind in KINDS]
IN_A_BRANCH = KINDS.index("model:right") + 1  # 1-based: the fan-out's second branch
AFTER_THE_FAN_OUT = KINDS.index("model:last") + 1


def test_killed_in_a_fan_out_and_after_it_it_goes_on_where_it_was(
    durable_db: str, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"
    positions = [IN_A_BRANCH, AFTER_THE_FAN_OUT]
    outcome = crash_and_resume(durable_db, log, positions, child=CHILD)
    # each call in flight ran again; no recorded decision or call did, and the live
    # decisions after each resume chose the next place (never `first` again, never the end)
    assert log.read_text().splitlines() == expected_log(SEQUENCE, positions)
    assert outcome["status"] == "SUCCESS"
    assert outcome["output"] == "last done"


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)  # PostgreSQL: the test above
def test_killed_in_the_first_agent_it_goes_on_to_the_fan_out(
    durable_db: str, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"
    outcome = crash_and_resume(durable_db, log, [2], child=CHILD)
    assert log.read_text().splitlines() == expected_log(SEQUENCE, [2])
    assert outcome["output"] == "last done"
