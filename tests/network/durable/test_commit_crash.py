"""A durable run on a thread killed after the store committed an agent call and before DBOS
recorded that commit's step: the resumed run executes the commit again, recognises the
thread's next revision as this very commit (the call it replays started at another time),
and goes on: each agent call is committed once and the run ends as an uncrashed one."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import anyio
import pytest

from network.threads import SQLStore
from tests.network.durable.crash_network import ORDER
from tests.network.durable.crash_network import SEQUENCE as KINDS
from tests.network.durable.harness import finish, kill_when_ready, spawn


@pytest.mark.parametrize("committed", [1, 3])
def test_a_commit_made_before_the_kill_is_recognised_by_the_resumed_run(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, committed: int
) -> None:
    log, store = tmp_path / "effects.log", str(tmp_path / "threads.db")
    run_id = f"run_{uuid.uuid4().hex[:10]}"
    command = ["-m", "tests.network.durable.commit_child", durable_db, run_id]
    monkeypatch.setenv("AN_THREAD_STORE", store)
    monkeypatch.setenv("AN_KILL_AFTER_COMMIT", str(committed))
    kill_when_ready(spawn([*command, "run"], log, None), log)
    monkeypatch.delenv("AN_KILL_AFTER_COMMIT")
    finish(spawn([*command, "resume"], log, None))
    outcome = json.loads(Path(f"{log}.result").read_text())
    assert outcome["status"] == "SUCCESS", outcome
    assert outcome["output"] == "writer is done"
    assert log.read_text().splitlines() == [f"{kind} go" for kind in KINDS]  # none twice
    assert [result.agent for result in anyio.run(_results, store)] == ORDER  # once each


async def _results(store: str) -> list:
    async with SQLStore(store) as opened:
        thread = await opened.get_thread("thread-1")
    assert thread is not None
    return list(thread.results)
