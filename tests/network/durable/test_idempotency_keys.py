"""What a tool of a durable run may key a side effect on, when a process is killed inside it
and the run resumed in another (docs/durable.md, "What completed means").

- A tool the run itself calls: `ctx.idempotency_key` (the thread id, else the run id, and the
  tool call id) is the same on both executions: the call's id comes from the recorded model
  answer, which the resumed run replays.
- A tool inside a sub-run (an agent used as a tool: one recorded step, run again whole): the
  sub-run's model is asked again and names its calls anew, so `ctx.idempotency_key` differs;
  `ctx.run.run_id` (the sub-run's, made from its caller's run id and calling tool call id) is
  the same: the key to build on, with what the tool does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.network.durable.harness import crash_and_resume

CHILD = "tests.network.durable.keyed_child"
# 1-based effects: model:boss, tool:charge (the run's), model:boss, model:clerk,
# tool:charge (the sub-run's)
RUNS_CHARGE, SUB_RUNS_CHARGE = 2, 5


def _charges(log: Path) -> list[list[str]]:
    """Each charge that ran: where from, its idempotency key, its run id."""
    done = log.read_text().splitlines()
    return [line.split(" ")[1:] for line in done if line.startswith("tool:charge")]


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_the_runs_own_tool_sees_one_idempotency_key_on_both_executions(
    durable_db: str, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"
    outcome = crash_and_resume(durable_db, log, [RUNS_CHARGE], CHILD)
    assert outcome["status"] == "SUCCESS" and outcome["output"] == "boss is done"
    charges = _charges(log)
    first, again = (charge for charge in charges if charge[0] == "run")
    assert first == again  # the same key and the same run id
    assert first[1].startswith(f"{first[2]}:call_")  # the run id, then the recorded call's id


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_a_sub_runs_tool_keeps_its_run_id_but_not_its_idempotency_key(
    durable_db: str, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"
    outcome = crash_and_resume(durable_db, log, [SUB_RUNS_CHARGE], CHILD)
    assert outcome["status"] == "SUCCESS" and outcome["output"] == "boss is done"
    first, again = (charge for charge in _charges(log) if charge[0] == "sub-run")
    assert first[2] == again[2] and first[2].startswith("run_")  # the sub-run's run id
    assert first[1] != again[1]  # the re-made model named its call anew
