"""A sub-run (an agent used as a tool) in a durable run is one recorded tool step: a process
killed inside it runs it again whole in the process that resumes the run, its model calls
and its tools included (at least once). Its run id is the same on both executions (made
from the caller's run id and the calling tool call's id, which the recorded model answer
keeps), so a tool inside it can key its side effect on `ctx.run.run_id`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.network.durable.harness import crash_and_resume

PAYMENT = 3  # 1-based effect: model:boss, model:clerk, tool:pay (killed once it paid)


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_a_sub_run_killed_midway_runs_again_whole_under_the_same_run_id(
    durable_db: str, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"
    outcome = crash_and_resume(durable_db, log, [PAYMENT], "tests.network.durable.subrun_child")
    assert outcome["status"] == "SUCCESS" and outcome["output"] == "boss is done"
    done = log.read_text().splitlines()
    # the boss's recorded answer is replayed; the sub-run (one step, not recorded) runs again
    assert [line.split(" ")[0] for line in done] == [
        "model:boss",
        "model:clerk",
        "tool:pay",
        "model:clerk",
        "tool:pay",
        "model:clerk",
        "model:boss",
    ]
    first, again = (line.split(" ")[1] for line in done if line.startswith("tool:pay"))
    assert first == again and first.startswith("run_")
