"""The steps of a durable run are DBOS's rows, written by `network.durable.step_table`: DBOS
reads them as its own, an execution that lost its run (recovered elsewhere, cancelled) records
nothing more, a second outcome for a recorded step is refused, and dropped connections are
retried."""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import psycopg
import pytest
from dbos import DBOS

from agents import Agent, ScriptedModel, ToolContext, tool
from agents.models.scripted import call
from network import Network, durable
from network.durable.step_table import step_table

pytestmark = pytest.mark.anyio

effects: list[str] = []
interference: dict[str, Any] = {"db": "", "act": None}


def _execute(db: str, sql: str, *params: Any) -> None:
    """One statement on the system database, from outside DBOS (as another process would)."""
    if db.startswith("sqlite"):
        with sqlite3.connect(db.removeprefix("sqlite:///")) as connection:
            connection.execute(sql.replace("%s", "?"), params)
    else:
        with psycopg.connect(db, autocommit=True) as connection:
            connection.execute(sql.replace("workflow_status", "dbos.workflow_status"), params)


@DBOS.step()
def dbos_helper() -> int | None:
    """A user's own DBOS step, called by a tool."""
    return DBOS.step_id


@tool
def interfere(ctx: ToolContext) -> str:
    """Do what the test asks, from inside the run."""
    effects.append("tool")
    interference["step_id"] = dbos_helper()
    act = interference["act"]
    if act is not None:
        act(interference["db"], DBOS.workflow_id)
    ctx.state.kv.set("interfered", True)
    return "done"


def _answer(request: Any) -> Any:
    effects.append("model")
    return call("interfere") if len(request.history) == 1 else "finished"


team = Network(
    "step-table-team",
    agents=[Agent("worker", model=ScriptedModel(_answer), tools=[interfere])],
    router=lambda ctx: "worker" if ctx.call_count < 2 else None,
)


@pytest.fixture
def launched(durable_db: str) -> Iterator[str]:
    effects.clear()
    interference.update(db=durable_db, act=None)
    durable.launch([team], db=durable_db)
    try:
        yield durable_db
    finally:
        durable.shutdown()


async def test_dbos_lists_the_steps_of_a_durable_run_as_its_own(launched: str) -> None:
    result = await team.run("go", durable=True, run_id=f"listed-{uuid.uuid4().hex[:8]}")
    steps = await DBOS.list_workflow_steps_async(result.run_id)
    assert [step["function_id"] for step in steps] == list(range(1, len(steps) + 1))
    assert [step["function_name"] for step in steps] == [
        "run_started",
        "router",
        "model:worker",
        "tool:interfere",
        "router",
        "model:worker",
        "router",
    ]
    assert all(step["error"] is None for step in steps)
    router_record, writes, spend = steps[1]["output"]  # DBOS's serializer read our row back
    assert router_record is not None and writes == [] and spend is None
    assert steps[3]["output"][1] == [("interfered", True)]
    assert all(step["completed_at_epoch_ms"] >= step["started_at_epoch_ms"] for step in steps)


async def test_a_dbos_step_called_by_a_tool_runs_inside_the_tools_step(launched: str) -> None:
    """As inside a DBOS step: a plain call, which records no step of its own (a replay, which
    does not run the tool, would otherwise find the run's later steps renumbered)."""
    result = await team.run("go", durable=True, run_id=f"nested-{uuid.uuid4().hex[:8]}")
    steps = await DBOS.list_workflow_steps_async(result.run_id)
    assert [step["function_name"] for step in steps][3:5] == ["tool:interfere", "router"]
    assert interference["step_id"] == steps[3]["function_id"] == 4


async def test_an_execution_that_lost_its_run_records_no_further_step(launched: str) -> None:
    """Another worker takes the run over (DBOS changes its owner) while the tool runs: the
    tool's outcome is not recorded, and this execution runs nothing after it."""

    def take_over(db: str, run_id: str) -> None:
        _execute(
            db,
            "UPDATE workflow_status SET owner_xid = %s WHERE workflow_uuid = %s",
            "another-worker",
            run_id,
        )

    interference["act"] = take_over
    run_id = f"taken-{uuid.uuid4().hex[:8]}"
    with pytest.raises(TimeoutError):  # DBOS waits for the new owner's outcome
        with anyio.fail_after(2):
            await team.run("go", durable=True, run_id=run_id)
    assert effects == ["model", "tool"]
    steps = await DBOS.list_workflow_steps_async(run_id)
    assert [step["function_name"] for step in steps] == ["run_started", "router", "model:worker"]


async def test_a_run_cancelled_while_a_tool_runs_stops_without_recording_it(
    launched: str,
) -> None:
    def cancel(db: str, run_id: str) -> None:  # from outside the workflow, as a caller would
        canceller = threading.Thread(target=DBOS.cancel_workflow, args=(run_id,))
        canceller.start()
        canceller.join()

    interference["act"] = cancel
    run_id = f"cancelled-{uuid.uuid4().hex[:8]}"
    with pytest.raises(Exception, match="cancelled"):
        await team.run("go", durable=True, run_id=run_id)
    assert effects == ["model", "tool"]
    steps = await DBOS.list_workflow_steps_async(run_id)
    assert [step["function_name"] for step in steps] == ["run_started", "router", "model:worker"]
    status = await DBOS.get_workflow_status_async(run_id)
    assert status is not None and status.status == "CANCELLED"


async def test_a_second_outcome_for_a_recorded_step_is_refused(launched: str) -> None:
    """Writes made from inside the run, while its execution owns it: a stranger's token is
    refused, a new step is written once, and another outcome for a written step is not."""
    from dbos._context import get_local_dbos_context
    from dbos._dbos import _get_dbos_instance

    table = step_table(_get_dbos_instance()._sys_db)
    outcomes: list[str] = []

    def write_steps(db: str, run_id: str) -> None:
        context = get_local_dbos_context()
        assert context is not None and context.owner_xid is not None
        for number, owner in [
            (50, "a-stranger"),
            (50, context.owner_xid),
            (50, context.owner_xid),
            (2, context.owner_xid),
        ]:
            time.sleep(0.01)  # each write another completion time: not a retry of the last
            try:
                table.record(
                    run_id,
                    owner,
                    number,
                    "extra",
                    started=1,
                    output="x",
                    error=None,
                    serialization="py_pickle",
                )
                outcomes.append("written")
            except BaseException as exc:  # DBOS's ownership errors are BaseExceptions
                outcomes.append(type(exc).__name__)

    interference["act"] = write_steps
    result = await team.run("go", durable=True, run_id=f"twice-{uuid.uuid4().hex[:8]}")
    assert outcomes == [
        "DBOSWorkflowConflictIDError",
        "written",
        "DBOSStepNondeterminismError",
        "DBOSStepNondeterminismError",
    ]
    steps = await DBOS.list_workflow_steps_async(result.run_id)
    assert [step["function_id"] for step in steps] == [1, 2, 3, 4, 5, 6, 7, 50]
    assert steps[1]["function_name"] == "router" and steps[-1]["output"] == "x"


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
async def test_a_run_goes_on_when_the_server_drops_every_connection_mid_run(
    launched: str,
) -> None:
    """The tool ends every other session of the server: the steps after it are written on
    new connections, and the run ends as an undisturbed one does."""

    def drop_connections(db: str, run_id: str) -> None:
        with psycopg.connect(db, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )

    undisturbed = await team.run("go", durable=True, run_id=f"calm-{uuid.uuid4().hex[:8]}")
    effects.clear()
    interference["act"] = drop_connections
    disturbed = await team.run("go", durable=True, run_id=f"dropped-{uuid.uuid4().hex[:8]}")
    assert effects == ["model", "tool", "model"]
    assert disturbed.state.snapshot() == undisturbed.state.snapshot()
    assert disturbed.output == undisturbed.output


async def test_an_executions_first_step_is_recorded_with_the_read_of_its_steps(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`begin_async` reads the recorded steps as they were and records the first step when it
    is missing (one statement on PostgreSQL); a stranger's token records nothing."""
    from dbos._dbos import _get_dbos_instance

    from network.durable.step_table import StepOutcome

    result = await team.run("go", durable=True, run_id=f"begin-{uuid.uuid4().hex[:8]}")
    run_id, owner = result.run_id, "an-execution"
    _execute(  # as DBOS hands a run to a new execution
        launched,
        "UPDATE workflow_status SET owner_xid = %s WHERE workflow_uuid = %s",
        owner,
        run_id,
    )
    table = step_table(_get_dbos_instance()._sys_db)
    statements: list[str] = []
    execute = table.connections.execute_async

    async def counted(sql: str, params: dict[str, Any]) -> list[Any]:
        statements.append(sql)
        return await execute(sql, params)

    monkeypatch.setattr(table.connections, "execute_async", counted)

    def first(number: int, token: str) -> StepOutcome:
        return StepOutcome(run_id, token, number, "begun", 1, "x", None, "py_pickle")

    before = await table.recorded_async(run_id)
    with pytest.raises(BaseException, match=run_id) as refused:
        await table.begin_async(first(90, "a-stranger"))
    assert type(refused.value).__name__ == "DBOSWorkflowConflictIDError"
    statements.clear()
    assert await table.begin_async(first(90, owner)) == before  # as they were before it
    assert len(statements) == (2 if table.sqlite else 1)
    after = await table.recorded_async(run_id)
    assert set(after) == {*before, 90} and after[90].name == "begun"
    assert await table.begin_async(first(90, owner)) == after  # there: read, not written again
    assert (await table.recorded_async(run_id))[90] == after[90]
