"""A durable run routed by `sequence`, killed with SIGKILL mid-run, goes on where it was when
resumed: the router keeps no place of its own and reads it from the calls the replay
restored, so no agent runs again from the start and none is skipped (a `Parallel` fan-out
counts as one place)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, StopReason, durable
from routers import sequence
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
    outcome = crash_and_resume(durable_db, log, positions, child=CHILD, sequence=SEQUENCE)
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


@tool(requires_confirmation=True)
def deploy(target: str, ctx: ToolContext) -> str:
    """Deploy the build."""
    ctx.kv.set("deployed", target)
    return f"deployed to {target}"


def _agent(name: str, *answers: object, **options: object) -> Agent:
    model = ScriptedModel(list(answers) or [f"{name} done"], repeat_last=True)
    return Agent(name, description=f"the {name}", model=model, **options)  # type: ignore[arg-type]


builder = _agent("builder")
deployer = _agent("deployer", call("deploy", target="prod"), "deployed", tools=[deploy])
reviewer = _agent("reviewer")
release = Network(
    "release", agents=[builder, deployer, reviewer], router=sequence(builder, deployer, reviewer)
)


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[str]:
    db = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    durable.launch([release], db=db)
    try:
        yield db
    finally:
        durable.shutdown()


@pytest.mark.anyio
async def test_a_durable_resume_goes_on_after_the_interrupted_agent(launched: str) -> None:
    run_id = f"rel-{uuid.uuid4().hex[:6]}"
    stopped = await release.run("ship it", durable=True, run_id=run_id)
    assert stopped.stop_reason == StopReason.INTERRUPTED
    answers = [stopped.interrupts[0].accept()]
    resumed = await release.run(stopped.resume(answers), durable=True, run_id=f"{run_id}-on")
    # the continuation rebuilds the stopped run from what it recorded: the deployer's held
    # call is finished, then the sequence goes on (never back to the builder)
    assert [r.agent for r in resumed.results] == ["deployer", "reviewer"]
    assert resumed.stop_reason == StopReason.ROUTER_FINISHED
    assert resumed.state.kv.get("deployed") == "prod"
