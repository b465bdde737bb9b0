"""A durable run that stops on a confirmation (or on client tool calls) continues durably:
`network.run(result.resume(...), durable=True)` is a workflow of its own whose steps are
recorded, so a continuation killed with SIGKILL resumes in a new process without repeating a
completed step, and ends as a continuation that never crashed."""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agents import Agent, ScriptedModel, call, client_tool, tool
from network import (
    ConfigurationError,
    Network,
    Resume,
    StopReason,
    Telemetry,
    ThreadRef,
    UsageLimits,
    durable,
)
from network.run.client_results import ClientToolError
from network.run.interrupts import InterruptError
from network.threads import SQLStore
from tests.network.durable.booking_network import RESUMED, RUN, booking
from tests.network.durable.harness import crash_and_resume, expected_log

CHILD = "tests.network.durable.booking_child"
SEQUENCE = RUN + RESUMED
SEED = int(os.environ.get("AN_CRASH_SEED", random.randrange(1 << 30)))
BOOKED = {"output": "Done: booked 12A", "state": {"seat": "12A", "bookings": 1}}


def test_a_continuation_killed_at_random_steps_resumes_without_repeating_one(
    durable_db: str, tmp_path: Path
) -> None:
    # kills in the continuation only: the first run ends (interrupted) before it starts
    first = len(RUN) + 1
    positions = sorted(random.Random(SEED).sample(range(first, len(SEQUENCE) + 1), 2))
    log = tmp_path / "effects.log"
    outcome = crash_and_resume(durable_db, log, positions, child=CHILD, sequence=SEQUENCE)
    note = f"killed at {positions} (AN_CRASH_SEED={SEED})"
    kinds = [line.split(" ", 1)[0] for line in log.read_text().splitlines()]
    assert kinds == expected_log(SEQUENCE, positions), note
    assert {key: outcome[key] for key in BOOKED} == BOOKED, note
    assert outcome["status"] == "SUCCESS"


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_a_booking_recorded_before_the_kill_is_not_made_again(
    durable_db: str, tmp_path: Path
) -> None:
    after_booking = len(RUN) + RESUMED.index("model:booker") + 1
    log = tmp_path / "effects.log"
    outcome = crash_and_resume(durable_db, log, [after_booking], child=CHILD)
    kinds = [line.split(" ", 1)[0] for line in log.read_text().splitlines()]
    assert kinds.count("tool:book") == 1
    assert kinds.count("model:booker") == 3  # the one in flight ran again
    assert {key: outcome[key] for key in BOOKED} == BOOKED


@pytest.fixture
def launched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("AN_DURABLE_LOG", str(tmp_path / "effects.log"))
    db = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    durable.launch([booking], db=db)
    try:
        yield db
    finally:
        durable.shutdown()


def steps_of(db: str, run_id: str) -> list[str]:
    client = durable.DurableClient(db)
    try:
        return [step["function_name"] for step in client._client.list_workflow_steps(run_id)]
    finally:
        client.close()


@pytest.mark.anyio
async def test_each_step_of_a_durable_resume_is_recorded(launched: str) -> None:
    first = await booking.run("Book a seat", durable=True, run_id="book-1")
    assert first.stop_reason == StopReason.INTERRUPTED
    seen: list[str] = []
    answers = [interrupt.accept() for interrupt in first.interrupts]
    resumed = await booking.run(
        first.resume(answers),
        durable=True,
        run_id="book-1-on",
        sinks=[lambda e: seen.append(e.type)],
    )
    assert (resumed.output, resumed.state.snapshot()) == (BOOKED["output"], BOOKED["state"])
    assert steps_of(launched, "book-1-on") == ["run_started", "tool:book", "router",
                                               "model:booker", "router"]  # fmt: skip
    assert seen[0] == "RUN_STARTED" and seen[-1] == "RUN_FINISHED"
    client = durable.DurableClient(launched)
    try:
        status = client.status("book-1-on")
    finally:
        client.close()
    assert (status.status, status.output, status.state) == ("SUCCESS", *BOOKED.values())
    again = await booking.run(first.resume(answers), durable=True, run_id="book-1-on")
    assert again.output == BOOKED["output"]  # its recorded outcome: nothing ran again
    assert (Path(launched.removeprefix("sqlite:///")).parent / "effects.log").read_text().count(
        "tool:book"
    ) == 1


@pytest.mark.anyio
async def test_a_rejected_call_continues_durably_from_the_checkpoint(launched: str) -> None:
    first = await booking.run("Book a seat", durable=True, run_id="book-2")
    answers = [interrupt.reject("not that one") for interrupt in first.interrupts]
    resumed = await booking.run(first.resume(answers), durable=True, run_id="book-2-on")
    assert resumed.state.snapshot() == {}
    assert resumed.output is not None and resumed.output.startswith("Done: Rejected")
    assert "tool:book" not in steps_of(launched, "book-2-on")


@pytest.mark.anyio
async def test_answers_that_do_not_match_record_nothing(launched: str) -> None:
    first = await booking.run("Book a seat", durable=True, run_id="book-3")
    with pytest.raises(InterruptError, match="not answered"):
        await booking.run(first.resume([]), durable=True, run_id="book-3-on")
    client = durable.DurableClient(launched)
    try:
        with pytest.raises(KeyError):
            client.status("book-3-on")
    finally:
        client.close()


@pytest.mark.anyio
async def test_a_durable_resume_on_a_thread_loads_and_commits_through_steps(
    launched: str, tmp_path: Path
) -> None:
    store = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    first = await booking.run(
        "Book a seat", durable=True, run_id="book-4", thread=ThreadRef("trip", store=store)
    )
    assert first.persisted
    answers = [interrupt.accept() for interrupt in first.interrupts]
    resumed = await booking.run(
        first.resume(answers),
        thread=ThreadRef(first.thread_id, store=store),
        durable=True,
        run_id="book-4-on",
    )
    assert resumed.state.snapshot() == BOOKED["state"]
    steps = steps_of(launched, "book-4-on")
    # the store claims the answer once, as a recorded step, before the tool runs
    assert steps[:4] == ["run_started", "thread_load", "thread_claim", "tool:book"]
    assert steps.count("thread_commit") == 2  # the resumed call, the booker's answer
    async with SQLStore(store) as opened:
        thread = await opened.get_thread("trip")
    assert thread is not None and thread.state["seat"] == "12A"
    assert [r.agent for r in thread.results] == ["booker", "booker", "booker"]


@pytest.mark.anyio
async def test_a_durable_resume_by_thread_id_answers_once(launched: str, tmp_path: Path) -> None:
    from network import AlreadyAnsweredError, Resume

    thread = ThreadRef("trip-2", store=f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}")
    first = await booking.run("Book a seat", durable=True, run_id="book-8", thread=thread)
    async with SQLStore(str(thread.store)) as opened:
        waiting = (await opened.get_thread("trip-2")).pending_interrupts  # type: ignore[union-attr]
    assert [i.id for i in waiting] == [i.id for i in first.interrupts]
    answer = Resume([waiting[0].accept()])
    resumed = await booking.run(answer, thread=thread, durable=True, run_id="book-8-on")
    assert resumed.state.snapshot() == BOOKED["state"]
    with pytest.raises(AlreadyAnsweredError, match="answered already"):
        await booking.run(answer, thread=thread, durable=True, run_id="book-8-again")
    assert "tool:book" not in steps_of(launched, "book-8-again")
    async with SQLStore(str(thread.store)) as opened:
        stored = await opened.get_thread("trip-2")
    assert stored is not None and stored.pending == [] and stored.state["bookings"] == 1


@pytest.mark.anyio
async def test_a_durable_resume_by_thread_id_links_to_the_interrupted_runs_trace(
    launched: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A continuation by thread id starts from a stand-in for the stopped run, which held no
    # trace ids: its root span had no link to the interrupted run's. The thread's entry
    # keeps them now.
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(booking, "telemetry", Telemetry(tracer_provider=provider))
    thread = ThreadRef("trip-3", store=f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}")
    first = await booking.run("Book a seat", durable=True, run_id="book-9", thread=thread)
    async with SQLStore(str(thread.store)) as opened:
        waiting = (await opened.get_thread("trip-3")).pending_interrupts  # type: ignore[union-attr]
    exporter.clear()
    answer = Resume([waiting[0].accept()])
    await booking.run(answer, thread=thread, durable=True, run_id="book-9-on")

    (root,) = [span for span in exporter.get_finished_spans() if span.parent is None]
    (link,) = root.links
    assert (f"{link.context.trace_id:032x}", f"{link.context.span_id:016x}") == (
        first.trace_id,
        first.span_id,
    )


CONFIRM = client_tool(
    "confirm_date",
    "Ask the user for a date.",
    {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]},
)


def until_answered(agent: Agent) -> Any:
    def route(ctx: Any) -> Any:
        last = ctx.last_result
        return None if last is not None and last.text else agent

    return route


@pytest.mark.anyio
async def test_client_tool_results_continue_durably(launched: str) -> None:
    model = ScriptedModel([call("confirm_date", date="mon"), "Booked for the date given."])
    agent = Agent("concierge", description="books", tools=[CONFIRM], model=model)
    network = Network("concierge", agents=[agent], router=until_answered(agent))
    durable.launch([network], db=launched)
    stopped = await network.run("book", durable=True, run_id=f"c-{uuid.uuid4().hex[:6]}")
    assert stopped.stop_reason == StopReason.CLIENT_TOOL
    (pending,) = stopped.pending_tool_calls
    with pytest.raises(ClientToolError, match="no result"):
        await network.run(stopped.tool_results({}), durable=True)
    done = await network.run(
        stopped.tool_results({pending.id: {"date": "tue"}}), durable=True, run_id="c-on"
    )
    assert done.output == "Booked for the date given."
    assert model.requests[-1].history[-1].content == '{"date": "tue"}'
    assert steps_of(launched, "c-on") == ["run_started", "router", "model:concierge", "router"]


@tool
def find_rooms(date: str) -> str:
    """Find rooms free on a date."""
    return f"rooms on {date}: 2"


@pytest.mark.anyio
async def test_a_durable_client_tool_continuation_keeps_the_callers_limits(
    launched: str,
) -> None:
    model = ScriptedModel(
        [call("confirm_date", date="mon"), call("find_rooms", date="mon"), "Booked."]
    )
    agent = Agent("concierge", description="books", tools=[CONFIRM, find_rooms], model=model)
    network = Network("limited", agents=[agent], router=until_answered(agent))
    durable.launch([network], db=launched)
    stopped = await network.run("book", durable=True, run_id=f"l-{uuid.uuid4().hex[:6]}")
    (pending,) = stopped.pending_tool_calls
    done = await network.run(
        stopped.tool_results({pending.id: {"date": "mon"}}),
        durable=True,
        run_id=f"l-on-{uuid.uuid4().hex[:6]}",
        limits=UsageLimits(max_model_calls=1),
    )
    # the continuation needs two requests; the caller allowed one (the network sets none)
    assert done.stop_reason == StopReason.USAGE_LIMIT
    assert done.limit_exceeded is not None and done.limit_exceeded.limit == "max_model_calls"
    assert len(model.requests) == 2


@pytest.mark.anyio
async def test_limits_that_are_not_usage_limits_record_nothing(launched: str) -> None:
    not_limits: Any = {"max_model_calls": 1}
    with pytest.raises(ConfigurationError, match="'booking': limits must be UsageLimits"):
        await booking.run("Book a seat", durable=True, run_id="book-5", limits=not_limits)
    first = await booking.run("Book a seat", durable=True, run_id="book-6")
    answers = [interrupt.accept() for interrupt in first.interrupts]
    with pytest.raises(ConfigurationError, match="'booking': limits must be UsageLimits"):
        await booking.run(
            first.resume(answers), durable=True, run_id="book-6-on", limits=not_limits
        )
    client = durable.DurableClient(launched)
    try:
        for refused in ("book-5", "book-6-on"):
            with pytest.raises(KeyError):
                client.status(refused)
    finally:
        client.close()


@pytest.mark.anyio
async def test_a_continuation_under_the_stopped_runs_own_id_is_refused(launched: str) -> None:
    first = await booking.run("Book a seat", durable=True, run_id="book-7")
    answers = [interrupt.accept() for interrupt in first.interrupts]
    with pytest.raises(durable.DurableConfigError, match="'book-7' is the stopped run's own"):
        await booking.run(first.resume(answers), durable=True, run_id="book-7")
    resumed = await booking.run(first.resume(answers), durable=True, run_id="book-7-on")
    assert resumed.output == BOOKED["output"]


@pytest.mark.anyio
async def test_a_continuation_refused_its_run_id_leaves_the_stopped_run_to_answer(
    launched: str, tmp_path: Path
) -> None:
    """A refused id claimed the stopped run first: every later continuation was refused as
    answered already ("continued by run 'other-1'"), though nothing had run."""
    other = Network("other", agents=[Agent("o", description="o", model=ScriptedModel(["o"] * 5))])
    durable.launch([other], db=launched)
    await other.run("go", durable=True, run_id="other-1")
    first = await booking.run("Book a seat", durable=True, run_id="book-8")
    finished = await booking.run(first.resume([first.interrupts[0].accept()]), durable=True)
    stopped = await booking.run("Book a seat", durable=True, run_id="book-9")
    answers = [interrupt.accept() for interrupt in stopped.interrupts]
    with pytest.raises(durable.RunIdInUseError):
        await booking.run(stopped.resume(answers), durable=True, run_id="other-1")
    # the id of this network's run that continues another: its outcome would have been
    # returned as this continuation's, the booking never made
    for taken in ("book-8", finished.run_id):
        with pytest.raises(durable.DurableConfigError, match="not a continuation of run 'book-9'"):
            await booking.run(stopped.resume(answers), durable=True, run_id=taken)
    resumed = await booking.run(stopped.resume(answers), durable=True, run_id="book-9-on")
    assert resumed.output == BOOKED["output"] and resumed.state.snapshot() == BOOKED["state"]
    again = await booking.run(stopped.resume(answers), durable=True, run_id="book-9-on")
    assert again.output == BOOKED["output"]  # its own id again: its recorded outcome
    kinds = [line.split(" ", 1)[0] for line in (tmp_path / "effects.log").read_text().splitlines()]
    assert kinds.count("tool:book") == 2  # book-8's continuation and book-9's, once each


@pytest.mark.anyio
async def test_a_continuation_that_failed_to_start_leaves_the_stopped_run_to_answer(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped = await booking.run("Book a seat", durable=True, run_id="book-10")
    answers = [interrupt.accept() for interrupt in stopped.interrupts]

    def unreachable() -> Any:
        async def start(*args: Any) -> Any:
            raise OSError("the database went away")  # before DBOS recorded anything

        return start

    with monkeypatch.context() as patched:
        patched.setattr("network.durable.runs.registered_workflow", unreachable)
        with pytest.raises(OSError, match="went away"):
            await booking.run(stopped.resume(answers), durable=True, run_id="book-10-on")
    assert stopped.continued_by is None  # nothing ran: it may be answered again
    resumed = await booking.run(stopped.resume(answers), durable=True, run_id="book-10-on")
    assert resumed.output == BOOKED["output"]
