"""What a resumed durable run sees and shows: its rebuilt state, its event stream (a
STATE_SNAPSHOT, then the remaining steps), and its thread (each agent call committed once)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from network import durable
from network.threads import SQLStore
from tests.network.durable.crash_network import SEQUENCE, team
from tests.network.durable.harness import crash_and_resume, expected_log

WRITER_TOOL = len(SEQUENCE) - SEQUENCE[::-1].index("tool:note")  # 1-based: the writer's
FINAL_STATE = {
    "routed": ["planner", "planner", "writer", "writer"],
    "notes": ["planner wrote this", "writer wrote this"],
    "count": 2,
}


def events_of(db: str, run_id: str) -> list[dict[str, Any]]:
    client = durable.DurableClient(db)
    try:
        return list(client.events(run_id))
    finally:
        client.close()


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_the_stream_of_a_resumed_run_goes_on_from_a_snapshot_of_its_rebuilt_state(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AN_DURABLE_LOG", str(tmp_path / "plain.log"))
    plain: list[str] = []
    anyio.run(lambda: team.run("go", sinks=[lambda event: plain.append(event.type)]))
    outcome = crash_and_resume(durable_db, tmp_path / "effects.log", [WRITER_TOOL])
    events = events_of(durable_db, outcome["run_id"])
    kinds = [event["type"] for event in events]
    assert kinds[0] == "RUN_STARTED" and kinds.count("RUN_STARTED") == 1
    assert kinds[-1] == "RUN_FINISHED" and kinds.count("RUN_FINISHED") == 1
    resumed = len(kinds) - 1 - kinds[::-1].index("STATE_SNAPSHOT")  # the resumed execution's
    # before it, the killed attempt's events up to its last write to the log (those of its
    # last FLUSH_EVERY seconds were lost with the process): the start of a plain run's stream
    assert kinds[:resumed] == plain[:resumed]
    # the state the writer's tool call saw when it was killed: rebuilt from recorded steps
    assert events[resumed]["snapshot"] == {
        "routed": ["planner", "planner", "writer"],
        "notes": ["planner wrote this"],
        "count": 1,
    }
    rest = events[resumed + 1 :]
    assert rest[0] == {"type": "STEP_STARTED", "stepName": "writer"}  # the call under way
    assert [e["type"] for e in rest].count("STEP_FINISHED") == 2  # its end, and the last call
    assert "TOOL_CALL_RESULT" in [e["type"] for e in rest]
    assert outcome["state"] == FINAL_STATE


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_a_durable_run_on_a_thread_commits_each_agent_call_once(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_url = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    monkeypatch.setenv("AN_THREAD_STORE", store_url)
    positions = [3, WRITER_TOOL]  # the planner's tool, then the writer's, in flight
    log = tmp_path / "effects.log"
    outcome = crash_and_resume(durable_db, log, positions)
    assert log.read_text().splitlines() == [
        f"{kind} go" for kind in expected_log(SEQUENCE, positions)
    ]
    assert outcome["state"] == FINAL_STATE

    async def stored() -> Any:
        store = SQLStore(store_url)
        try:
            return await store.get_thread("thread-1")
        finally:
            await store.close()

    thread = anyio.run(stored)
    assert [result.agent for result in thread.results] == ["planner", "planner", "writer", "writer"]
    assert thread.state == FINAL_STATE
    assert [m.role for m in thread.messages].count("user") == 1
