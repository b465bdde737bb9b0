"""A durable run in this process: the same outcome and events as a plain run, replayed writes
validated like any write, and DBOS imported only when asked for."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents import Agent, ScriptedModel
from agents.models.scripted import call
from network import Network, ThreadRef, durable
from network.threads import MemoryStore
from tests.network.durable.crash_network import SEQUENCE, note, team
from tests.network.durable.harness import ROOT, kill_when_ready, spawn


@pytest.fixture
def launched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("AN_DURABLE_LOG", str(tmp_path / "effects.log"))
    db = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    durable.launch([team], db=db)
    try:
        yield db
    finally:
        durable.shutdown()


@pytest.mark.anyio
async def test_a_durable_run_ends_as_a_plain_run_does(launched: str, tmp_path: Path) -> None:
    plain_events: list[str] = []
    plain = await team.run("go", sinks=[lambda e: plain_events.append(e.type)])
    seen: list[str] = []
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    result = await team.run(
        "go", durable=True, run_id=run_id, sinks=[lambda e: seen.append(e.type)]
    )
    assert result.run_id == run_id
    assert result.output == plain.output
    assert result.state.snapshot() == plain.state.snapshot()
    assert [r.agent for r in result.state.results] == [r.agent for r in plain.state.results]
    assert seen == plain_events
    client = durable.DurableClient(launched)
    try:
        status = client.status(run_id)
        assert status.status == "SUCCESS" and status.network == "team"
        assert status.state == plain.state.snapshot()
        assert [e["type"] for e in client.events(run_id)] == plain_events
    finally:
        client.close()


@pytest.mark.anyio
async def test_the_id_of_a_finished_run_returns_its_outcome_without_running(
    launched: str, tmp_path: Path
) -> None:
    first = await team.run("go", durable=True, run_id="run-once")
    effects = (tmp_path / "effects.log").read_text()
    again = await team.run("go", durable=True, run_id="run-once")
    assert (tmp_path / "effects.log").read_text() == effects  # nothing ran again
    assert again.output == first.output
    assert again.state.snapshot() == first.state.snapshot()


@pytest.mark.anyio
async def test_tool_calls_of_one_answer_are_steps_too(launched: str) -> None:
    """Two calls in one answer run concurrently on staged views, each a recorded step."""
    both = ScriptedModel([[call("note", text="a"), call("note", text="b")], "done"])
    agent = Agent("twice", description="notes twice", tools=[note], model=both)
    pair = Network("pair", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None,
                   state_schema={"notes": {"type": list[str]}, "count": {"type": int}})  # fmt: skip
    durable.launch([pair], db=launched)
    result = await pair.run("go", durable=True, run_id="pair-1")
    assert result.state.snapshot() == {"notes": ["a", "b"], "count": 1}
    client = durable.DurableClient(launched)
    try:
        steps = [s["function_name"] for s in client._client.list_workflow_steps("pair-1")]
    finally:
        client.close()
    assert steps.count("tool:note") == 2 and steps.count("model:twice") == 2


@pytest.mark.anyio
async def test_a_second_launch_on_another_database_is_refused(
    launched: str, tmp_path: Path
) -> None:
    with pytest.raises(durable.DurableConfigError, match="already launched"):
        durable.launch([team], db=f"sqlite:///{tmp_path / 'other.sqlite'}")


@pytest.mark.anyio
async def test_a_durable_run_needs_a_store_it_can_record(launched: str) -> None:
    with pytest.raises(Exception, match="store= must be a URL"):
        await team.run("go", durable=True, thread=ThreadRef("t", store=MemoryStore()))


def test_a_replayed_write_is_validated_like_any_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resumed process declares `count` as text: the planner's recorded write (an int)
    is rejected, naming the key, and the run fails instead of going on with a bad state."""
    db = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    log = tmp_path / "effects.log"
    writer_tool = len(SEQUENCE) - SEQUENCE[::-1].index("tool:note")
    run_id = "run_validated"
    child = spawn(["-m", "tests.network.durable.child", db, run_id, "run"], log, writer_tool)
    kill_when_ready(child, log)
    monkeypatch.setenv("AN_COUNT_AS_TEXT", "1")
    resumed = spawn(["-m", "tests.network.durable.child", db, run_id, "resume"], log, None)
    resumed.communicate(timeout=90)
    client = durable.DurableClient(db)
    try:
        status = client.status(run_id)
    finally:
        client.close()
    assert status.status == "ERROR"
    assert "count" in (status.error or "")
    assert log.read_text().splitlines().count("tool:note go") == 2  # none ran after the error


def test_import_network_does_not_import_dbos() -> None:
    code = "import sys, network, agents, routers; print('dbos' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
