"""A router decision is recorded with the step after it, by the same statement: a run of five
agent calls records its 17 steps in 12 statements, DBOS lists every one of them with its
number, and a worker killed between a decision and its model step's record resumes with the
router asked again, each tool run once."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from dbos import DBOS, DBOSClient

from agents import Agent, ScriptedModel, ToolContext, tool
from agents.models.scripted import call
from network import Network, SharedBudget, ThreadRef, durable
from network.durable.engine import APP_NAME
from network.durable.step_table import step_table
from network.threads import budget_figures
from tests.network.durable.crash_network import SEQUENCE
from tests.network.durable.gaps_network import SEQUENCE as GAPS
from tests.network.durable.harness import finish, kill_when_ready, spawn

BUDGET_KEY = "durable:gaps"  # router_budget_child's
CALLS = 5  # as benchmarks/durable_scaleout.py: each agent call a router decision, model, tool
noted: list[str] = []


@tool
def note(item: str, ctx: ToolContext) -> str:
    """Note an item."""
    noted.append(item)
    ctx.state.kv.set("notes", len(noted))
    return "noted"


team = Network(
    "riding-team",
    agents=[Agent("worker", tools=[note], model=ScriptedModel(lambda _: call("note", item="x")))],
    router=lambda ctx: "worker" if ctx.call_count < CALLS else None,
)


def _route_and_write(ctx: Any) -> Any:
    ctx.state.kv.set("decided", ctx.call_count)  # the last decision writes too
    return "worker" if ctx.call_count < 2 else None


threaded = Network(
    "riding-thread",
    agents=list(team.agents.values()),
    router=_route_and_write,
)


@pytest.fixture
def launched(durable_db: str) -> Iterator[str]:
    noted.clear()
    durable.launch([team, threaded], db=durable_db)
    try:
        yield durable_db
    finally:
        durable.shutdown()


@pytest.mark.anyio
async def test_a_run_of_five_calls_records_its_17_steps_in_12_statements(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dbos._dbos import _get_dbos_instance

    table = step_table(_get_dbos_instance()._sys_db)
    execute = table.connections.execute_async
    writes: list[str] = []

    async def counted(sql: str, params: dict[str, Any]) -> list[Any]:
        if "INSERT INTO" in sql and "operation_outputs" in sql:
            writes.append(sql)
        return await execute(sql, params)

    monkeypatch.setattr(table.connections, "execute_async", counted)
    result = await team.run("go", durable=True, run_id=f"riding-{uuid.uuid4().hex[:8]}")
    assert noted == ["x"] * CALLS

    steps = await DBOS.list_workflow_steps_async(result.run_id)
    names = ["run_started", *["router", "model:worker", "tool:note"] * CALLS, "router"]
    assert [step["function_name"] for step in steps] == names
    assert [step["function_id"] for step in steps] == list(range(1, 18))
    # the first step, then per call one statement for the decision with its model call and
    # one for the tool call, then the last decision (before the run's end)
    assert len(writes) == 1 + 2 * CALLS + 1 == 12
    assert all(step["error"] is None for step in steps)
    record, state_writes, spend = steps[1]["output"]  # DBOS's serializer reads the row
    assert record is not None and state_writes == [] and spend is None
    assert steps[-1]["output"][0]["queued"] is None  # the last decision: the run ends
    # each decision keeps its own completion time: before the model call it led to began
    for decision, model in zip(steps[1::3], steps[2::3], strict=False):
        assert decision["completed_at_epoch_ms"] <= model["started_at_epoch_ms"]


@pytest.mark.anyio
async def test_the_runs_last_decision_rides_on_its_last_events_write(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's last decision has no step after it: on PostgreSQL the statement recording it
    appends the run's last events (RUN_FINISHED among them), one transaction, and the event
    log writes nothing after it; on SQLite it is written by itself, then the events. Every
    write a run makes is counted (the flusher's, on its thread, too)."""
    from dbos._dbos import _get_dbos_instance

    from network.durable import event_log

    monkeypatch.setattr(event_log, "FLUSH_EVERY", 3600.0)  # the run's writes only, no timer's
    db = step_table(_get_dbos_instance()._sys_db).connections
    writes: list[tuple[str, ...]] = []  # what each statement writing rows writes

    def count(sql: str, params: dict[str, Any]) -> None:
        names = [v for k, v in sorted(params.items()) if k.startswith("name")]
        events = ["events"] if "INSERT INTO" in sql and "streams" in sql else []
        if "INSERT INTO" in sql and (events or "operation_outputs" in sql):
            writes.append((*names, *events))

    execute, execute_async = db.execute, db.execute_async

    def counted(sql: str, params: dict[str, Any]) -> list[Any]:
        count(sql, params)
        return execute(sql, params)

    async def counted_async(sql: str, params: dict[str, Any]) -> list[Any]:
        if not db.sqlite:  # (SQLite's run through `execute`)
            count(sql, params)
        return await execute_async(sql, params)

    monkeypatch.setattr(db, "execute", counted)
    monkeypatch.setattr(db, "execute_async", counted_async)
    run_id = f"end-{uuid.uuid4().hex[:8]}"
    await team.run("go", durable=True, run_id=run_id)
    # the first step (PostgreSQL: with the read of the steps), then per call the decision
    # with its model call, and the tool call, then the last decision
    steps = [w for w in writes if w != ("events",)]
    assert len(steps) == 1 + 2 * CALLS + 1 == 12
    if db.sqlite:
        assert writes[-2:] == [("router",), ("events",)]
    else:  # 12 statements in all (the events before rode on the steps: `RIDE_AFTER`)
        assert writes[-1] == ("router", "events") and ("events",) not in writes
        batches = [b async for b in DBOS.read_stream_async(run_id, event_log.STREAM_KEY)]
        assert batches[-1][-1]["type"] == "RUN_FINISHED"
        rows = await db.execute_async(
            "SELECT count(*) FROM dbos.streams s JOIN dbos.operation_outputs o "
            "ON o.workflow_uuid = s.workflow_uuid AND o.xmin = s.xmin "
            "WHERE s.workflow_uuid = %(run)s AND o.function_id = 17",
            {"run": run_id},
        )
        assert rows == [(1,)]  # the last decision and the run's last batch: one transaction


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
@pytest.mark.parametrize("flush_every", [3600.0, 0.0])
def test_a_failed_write_of_the_last_decision_fails_the_run_without_its_end_in_the_stream(
    launched: str, flush_every: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statement that records the run's last decision (with its last events, or by
    itself when the flusher holds the log) is refused: the run fails with that error, and
    RUN_FINISHED is never appended, neither then nor by the flusher after (`flush_every`
    0: it writes every event handed back at once)."""
    import psycopg
    from dbos._dbos import _get_dbos_instance

    from network.durable import event_log

    monkeypatch.setattr(event_log, "FLUSH_EVERY", flush_every)
    db = step_table(_get_dbos_instance()._sys_db).connections
    execute_async = db.execute_async
    last = 1 + 3 * CALLS + 1

    async def refusing(sql: str, params: dict[str, Any]) -> list[Any]:
        if params.get("number") == last and "operation_outputs" in sql:
            raise psycopg.errors.InsufficientPrivilege("refused by the test")
        return await execute_async(sql, params)

    monkeypatch.setattr(db, "execute_async", refusing)
    run_id = f"refused-{uuid.uuid4().hex[:8]}"
    with pytest.raises(Exception, match="refused by the test"):
        anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
    time.sleep(0.3)  # a flusher's write handed back would have landed
    types = [e["type"] for batch in DBOS.read_stream(run_id, event_log.STREAM_KEY) for e in batch]
    assert "RUN_FINISHED" not in types
    assert last not in step_table(_get_dbos_instance()._sys_db).recorded(run_id)


@pytest.mark.anyio
async def test_the_runs_last_decision_is_recorded_before_its_final_event(launched: str) -> None:
    """A caller's sink that sees RUN_FINISHED finds every step of the run recorded, the last
    decision (which has no step to ride on) included."""
    from dbos._dbos import _get_dbos_instance

    table = step_table(_get_dbos_instance()._sys_db)
    run_id = f"last-{uuid.uuid4().hex[:8]}"
    seen: list[list[int]] = []

    def sink(event: Any) -> None:
        if event.type == "RUN_FINISHED":  # (a blocking read: the test's own)
            seen.append(sorted(table.recorded(run_id)))

    await team.run("go", durable=True, run_id=run_id, sinks=[sink])
    assert seen == [list(range(1, 18))]


@pytest.mark.anyio
async def test_a_thread_commit_after_the_last_decision_finds_it_recorded(
    launched: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit that takes the last decision's writes to the thread acts outside the run
    before it is recorded: the decision is written first, by itself, not carried by it."""
    from dbos._dbos import _get_dbos_instance

    table = step_table(_get_dbos_instance()._sys_db)
    execute = table.connections.execute_async
    written: list[list[str]] = []  # each step statement's rows, by name

    async def counted(sql: str, params: dict[str, Any]) -> list[Any]:
        if "INSERT INTO" in sql and "operation_outputs" in sql:
            names = [v for k, v in sorted(params.items()) if k.startswith("name")]
            written.append(names)
        return await execute(sql, params)

    monkeypatch.setattr(table.connections, "execute_async", counted)
    store = f"sqlite:///{tmp_path / 'threads.db'}"
    run_id = f"thread-{uuid.uuid4().hex[:8]}"
    thread = ThreadRef("t-1", store=store)
    result = await threaded.run("go", durable=True, run_id=run_id, thread=thread)
    assert result.state.kv.get("decided") == 2
    assert written == [
        ["run_started"],
        ["thread_load"],
        ["router", "model:worker"],
        ["tool:note"],
        ["thread_commit"],
        ["router", "model:worker"],
        ["tool:note"],
        ["thread_commit"],
        ["router"],  # the last decision, by itself...
        ["thread_commit"],  # ... before the commit of its writes
    ]
    steps = await DBOS.list_workflow_steps_async(run_id)
    assert [step["function_id"] for step in steps] == list(range(1, 13))


def _recorded(db: str, run_id: str) -> list[tuple[int, str]]:
    client = DBOSClient(system_database_url=db, application_name=APP_NAME)
    try:
        return [(s["function_id"], s["function_name"]) for s in client.list_workflow_steps(run_id)]
    finally:
        client.destroy()


SECOND_MODEL_CALL = 5  # 1-based in SEQUENCE: router, model:planner, tool:note, router, model
assert SEQUENCE[SECOND_MODEL_CALL - 2 : SECOND_MODEL_CALL] == ["router", "model:planner"]


def test_killed_between_a_decision_and_its_model_steps_record_the_router_runs_again(
    durable_db: str, tmp_path: Path
) -> None:
    """SIGKILL while the model call a recorded tool's next decision led to is in flight: the
    decision was not recorded (it rides on that model step's record), so the resumed run
    asks the router again; the tool before it ran once, and DBOS lists every step."""
    log = tmp_path / "effects.log"
    run_id = f"run_{uuid.uuid4().hex[:10]}"
    child = "tests.network.durable.child"
    killed = kill_when_ready(spawn(["-m", child, durable_db, run_id, "run"], log, 5), log)
    assert killed == "model:planner"
    names = ["run_started", "router", "model:planner", "tool:note"]
    assert _recorded(durable_db, run_id) == list(enumerate(names, start=1))

    finish(spawn(["-m", child, durable_db, run_id, "resume"], log, None))
    effects = [line.removesuffix(" go") for line in log.read_text().splitlines()]
    # the decision and the model call in flight ran again, nothing else did
    assert effects == SEQUENCE[:SECOND_MODEL_CALL] + SEQUENCE[SECOND_MODEL_CALL - 2 :]
    assert effects.count("tool:note") == SEQUENCE.count("tool:note") == 2
    assert effects.count("router") == SEQUENCE.count("router") + 1
    outcome = json.loads(Path(f"{log}.result").read_text())
    assert outcome["status"] == "SUCCESS" and outcome["state"]["count"] == 2
    listed = _recorded(durable_db, run_id)
    assert listed == list(enumerate(["run_started", *SEQUENCE], start=1))


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_an_llm_router_asked_again_after_a_kill_leaves_no_hold_on_its_budget(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The router's request reserves and settles inside its decision: asked again after a
    kill (its decision was not recorded yet), it spends again, as a request made twice does,
    and holds nothing; only the writer's request killed in flight stays held."""
    store = str(tmp_path / "budgets.db")
    monkeypatch.setenv("AN_BUDGET_STORE", store)
    log = tmp_path / "effects.log"
    run_id = f"run_{uuid.uuid4().hex[:10]}"
    child = "tests.network.durable.router_budget_child"
    second_write = 4  # 1-based: router, writer, router, writer (killed)
    assert GAPS[second_write - 2 : second_write] == ["router-model", "writer-model"]
    kill_when_ready(spawn(["-m", child, durable_db, run_id, "run"], log, second_write), log)
    finish(spawn(["-m", child, durable_db, run_id, "resume"], log, None))
    kinds = [line.split(" ", 1)[0] for line in log.read_text().splitlines()]
    assert kinds == GAPS[:second_write] + GAPS[second_write - 2 :]  # the router asked again
    figures = anyio.run(lambda: budget_figures(SharedBudget(BUDGET_KEY, store=store)))
    # each request settled once, the router's first answer to its second decision included,
    # but the writer's killed in flight, which is held until its hold_seconds pass
    assert (figures.requests, figures.held_requests) == (len(kinds) - 1, 1)


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_a_decision_and_its_step_sent_twice_with_events_are_recorded_once(launched: str) -> None:
    """The statement carrying a decision, its step and a batch of events, sent again after
    its answer was lost (it committed): both rows read as its own, the events appended once;
    another outcome for the decision is refused."""
    import psycopg
    from dbos import error
    from dbos._dbos import _get_dbos_instance

    from network.durable import event_log
    from network.durable.step_table import StepOutcome

    run_id = f"twice-{uuid.uuid4().hex[:8]}"
    anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
    owner = "an-execution"  # the run handed to an execution of the test's own
    with psycopg.connect(launched, autocommit=True) as conn:
        conn.execute(
            "UPDATE dbos.workflow_status SET owner_xid = %s WHERE workflow_uuid = %s",
            (owner, run_id),
        )
    table = step_table(_get_dbos_instance()._sys_db)
    decision = StepOutcome(run_id, owner, 90, "router", 1, "d", None, "py_pickle", 5)
    step = StepOutcome(run_id, owner, 91, "model:worker", 6, "m", None, "py_pickle")
    params = table._params_of([decision, step])
    batch = {"key": event_log.STREAM_KEY, "value": "e30=", "serialization": "py_pickle"}
    statement = table._rows_statement(2, riding=True)

    async def twice() -> list[list[Any]]:
        sent = {**params, **batch}
        return [await table.connections.execute_async(statement, sent) for _ in "ab"]

    first, second = anyio.run(twice)
    completed = params["completed"]
    assert sorted(first) == [(5, 1, 90), (completed, 1, 91)]  # both rows, one batch
    assert sorted(second) == [(5, 0, 90), (completed, 0, 91)]  # the same rows, no batch
    table._check_rows(second, params, 2)  # read as this statement's own
    steps = {s["function_id"]: s for s in DBOS.list_workflow_steps(run_id)}
    assert (steps[90]["output"], steps[91]["output"]) == ("d", "m")

    again = StepOutcome(run_id, owner, 92, "model:worker", 7, "n", None, "py_pickle")
    other = decision._replace(completed=6)  # the decision again, another outcome
    with pytest.raises(error.DBOSStepNondeterminismError):
        anyio.run(lambda: table.record_async(again, None, [other]))
