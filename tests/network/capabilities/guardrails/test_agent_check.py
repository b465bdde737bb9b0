"""Input and output guardrails of agents and networks: what runs, what a trip stops, and that
nothing of the tripped call is committed (state, history, output_key, the thread on SQLite)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel, call, tool
from network import ConfigurationError, Network, StopReason, ThreadRef, UsageLimits
from network.capabilities.guardrails import (
    Guardrail,
    GuardrailResult,
    GuardrailTripped,
    input_guardrail,
    output_guardrail,
)
from network.history.messages import AssistantMessage, UserMessage
from network.threads import SQLStore

pytestmark = pytest.mark.anyio


class Verdict(BaseModel):
    tripped: bool
    reason: str


@input_guardrail
def no_homework(ctx: Any, text: str) -> GuardrailResult:
    if "homework" in text:
        return GuardrailResult.trip({"topic": "homework"})
    return GuardrailResult.allow()


class SlowModel:
    """A scripted model whose answer takes `delay` seconds; it counts started and finished
    requests (the side effects a cancelled call must not have)."""

    def __init__(self, answers: list[Any], delay: float = 5.0) -> None:
        self.started = 0
        self.finished = 0
        self.delay = delay
        self.inner = ScriptedModel(answers, name="slow")
        self.name = "slow"
        self.provider = "scripted"

    async def complete(self, request: Any, on_chunk: Any = None) -> Any:
        self.started += 1
        await anyio.sleep(self.delay)
        response = await self.inner.complete(request, on_chunk)
        self.finished += 1
        return response


async def until(condition: Callable[[], bool]) -> None:
    """Back once `condition` holds (polled), however slowly the machine runs the other task."""
    with anyio.fail_after(10):
        while not condition():
            await anyio.sleep(0.001)


def counting_tool() -> tuple[Any, list[str]]:
    ran: list[str] = []

    @tool
    def book(seat: str) -> str:
        """Book a seat."""
        ran.append(seat)
        return f"booked {seat}"

    return book, ran


async def test_an_input_guardrail_that_trips_stops_the_run_and_commits_nothing() -> None:
    model = ScriptedModel(["Sure, 2+2=4"])
    agent = Agent("tutor", model=model, output_key="answer", input_guardrails=[no_homework])
    result = await Network("school", agents=[agent]).run("do my homework: 2+2")

    assert result.stop_reason == StopReason.GUARDRAIL == "guardrail"
    tripped = result.guardrail
    assert isinstance(tripped, GuardrailTripped)
    assert (tripped.guardrail, tripped.kind, tripped.agent) == ("no_homework", "input", "tutor")
    assert tripped.info == {"topic": "homework"}
    assert result.results == [] and result.output is None
    assert "answer" not in result
    # the conversation holds the user's message and nothing of the call
    assert [type(m) for m in result.messages] == [UserMessage]


async def test_a_passing_input_guardrail_lets_the_call_through() -> None:
    agent = Agent("tutor", model=ScriptedModel(["Hello!"]), input_guardrails=[no_homework])
    result = await Network("school", agents=[agent]).run("hi")
    assert result.stop_reason == StopReason.ROUTER_FINISHED
    assert result.output == "Hello!"
    assert result.guardrail is None


async def test_a_trip_beside_a_slow_call_cancels_it_before_anything_runs() -> None:
    book, ran = counting_tool()
    model = SlowModel([[call("book", seat="1A")], "booked"], delay=30.0)
    checked = anyio.Event()

    @input_guardrail
    async def slow_to_refuse(ctx: Any, text: str) -> GuardrailResult:
        await until(lambda: model.started == 1)  # the model call is under way
        checked.set()
        return GuardrailResult.trip("no")

    agent = Agent(
        "booker",
        model=model,
        tools=[book],
        output_key="answer",
        input_guardrails=[slow_to_refuse],
    )
    with anyio.fail_after(10):  # far less than the model's 30 s: the call was cancelled
        result = await Network("air", agents=[agent]).run("book 1A")
    assert checked.is_set()
    assert result.stop_reason == "guardrail"
    assert (model.started, model.finished) == (1, 0)
    assert ran == []
    assert result.results == [] and "answer" not in result


async def test_an_answer_that_comes_first_waits_for_the_guardrail_and_is_discarded() -> None:
    book, ran = counting_tool()
    model = SlowModel([[call("book", seat="2C")]], delay=0.0)

    @input_guardrail
    async def late(ctx: Any, text: str) -> GuardrailResult:
        await until(lambda: model.finished == 1)  # the answer is back first
        return GuardrailResult.trip("late no")

    agent = Agent("booker", model=model, tools=[book], input_guardrails=[late])
    result = await Network("air", agents=[agent]).run("book 2C", limits=UsageLimits())
    assert result.stop_reason == "guardrail"
    assert len(model.inner.requests) == 1  # it answered, with a tool call ...
    assert ran == []  # ... that never ran
    assert result.results == []
    # the discarded answer was paid for: its tokens are the run's
    assert result.usage.total_tokens > 0


async def test_a_blocking_guardrail_runs_before_the_model_is_asked() -> None:
    model = SlowModel(["never"], delay=5.0)

    @input_guardrail(blocking=True)
    def strict(ctx: Any, text: str) -> GuardrailResult:
        return GuardrailResult.trip("blocked")

    agent = Agent("a", model=model, input_guardrails=[strict])
    result = await Network("n", agents=[agent]).run("hi")
    assert result.stop_reason == "guardrail" and result.guardrail.guardrail == "strict"
    assert model.started == 0


@pytest.mark.parametrize("blocking", [True, False], ids=["before the call", "beside it"])
async def test_a_slow_sync_guardrail_never_blocks_the_event_loop(blocking: bool) -> None:
    # The check waits for an event that only another task of the same event loop sets: run
    # on the loop, it would wait its whole 10 s with the loop stalled, and say so.
    released = threading.Event()
    ticks: list[int] = []
    seen: list[bool] = []

    @input_guardrail(blocking=blocking)
    def slow(ctx: Any, text: str) -> GuardrailResult:
        seen.append(released.wait(timeout=10))
        return GuardrailResult.allow()

    agent = Agent("a", model=ScriptedModel(["fine"]), input_guardrails=[slow])
    network = Network("n", agents=[agent])

    async def ticker() -> None:
        while not released.is_set():
            ticks.append(1)
            if len(ticks) == 5:  # the loop went round five times while the check ran
                released.set()
            await anyio.sleep(0.01)

    async with anyio.create_task_group() as group:
        group.start_soon(ticker)
        result = await network.run("hi")
    assert seen == [True] and len(ticks) >= 5
    assert result.output == "fine"


async def test_input_guardrails_run_once_per_run_at_the_agents_first_call() -> None:
    seen: list[str] = []

    @input_guardrail
    def watch(ctx: Any, text: str) -> GuardrailResult:
        seen.append(text)
        return GuardrailResult.allow()

    book, ran = counting_tool()
    model = ScriptedModel([[call("book", seat="3D")], "done"])
    agent = Agent("booker", model=model, tools=[book], input_guardrails=[watch])
    result = await agent.run("book 3D")
    assert result.output == "done" and ran == ["3D"]
    assert seen == ["book 3D"]  # two calls of the agent, one check of the input


async def test_a_handed_to_agents_input_guardrail_checks_the_run_s_input_and_can_stop_it() -> None:
    """Where the OpenAI Agents SDK runs only the first agent's input guardrails (its
    docs/guardrails.md), an agent's own run at its first call, a handoff's target too, as
    docs/coming-from-openai-agents.md says; the network's check the entry call only."""
    seen: list[tuple[str, str]] = []

    @input_guardrail
    def entry(ctx: Any, text: str) -> GuardrailResult:
        seen.append(("network", text))
        return GuardrailResult.allow()

    booking = Agent("booking", model=ScriptedModel(["Booked."]), input_guardrails=[no_homework])
    triage = Agent("triage", handoffs=[booking], model=ScriptedModel([call("transfer_to_booking")]))
    network = Network("airline", agents=[triage, booking], input_guardrails=[entry])

    result = await network.run("my homework: book a seat")
    assert result.stop_reason == "guardrail"
    assert (result.guardrail.guardrail, result.guardrail.agent) == ("no_homework", "booking")
    assert [r.agent for r in result.results] == ["triage"]  # the handoff kept, booking's call not
    assert seen == [("network", "my homework: book a seat")]  # once, at triage's call

    booking.model = ScriptedModel(["Booked."])
    triage.model = ScriptedModel([call("transfer_to_booking")])
    assert (await network.run("book a seat")).output == "Booked."


async def test_an_output_guardrail_that_trips_keeps_the_answer_and_output_key_out() -> None:
    @output_guardrail
    def no_secrets(ctx: Any, answer: str) -> GuardrailResult:
        return GuardrailResult.trip("secret") if "password" in answer else GuardrailResult.allow()

    writes: list[str] = []

    def on_start(call_view: Any) -> None:  # a hook's write belongs to the tripped call
        call_view.run.state.kv.set("hooked", True)
        writes.append("hooked")

    agent = Agent(
        "leaky",
        model=ScriptedModel(["the password is hunter2"]),
        output_key="answer",
        output_guardrails=[no_secrets],
        hooks={"on_start": on_start},
    )
    result = await Network("n", agents=[agent]).run("tell me")
    assert result.stop_reason == "guardrail"
    assert (result.guardrail.kind, result.guardrail.info) == ("output", "secret")
    assert writes == ["hooked"]
    assert "answer" not in result and "hooked" not in result  # rolled back
    assert result.results == [] and result.output is None
    assert result.state.kv.take_ops() == []


async def test_an_output_guardrail_checks_the_typed_value() -> None:
    class Quote(BaseModel):
        price: int

    checked: list[Any] = []

    @output_guardrail
    def not_free(ctx: Any, answer: Quote) -> GuardrailResult:
        checked.append(answer)
        return GuardrailResult.trip(answer.price) if answer.price <= 0 else GuardrailResult.allow()

    agent = Agent(
        "quoter",
        model=ScriptedModel(['{"price": 0}']),
        output_type=Quote,
        output_key="quote",
        output_guardrails=[not_free],
    )
    result = await Network("n", agents=[agent]).run("price?")
    assert result.stop_reason == "guardrail" and "quote" not in result
    assert checked == [Quote(price=0)]


async def test_an_output_guardrail_does_not_check_an_answer_that_calls_tools() -> None:
    book, ran = counting_tool()
    checked: list[str] = []

    @output_guardrail
    def watch(ctx: Any, answer: str) -> GuardrailResult:
        checked.append(answer)
        return GuardrailResult.allow()

    model = ScriptedModel([[call("book", seat="4E")], "booked 4E"])
    agent = Agent("booker", model=model, tools=[book], output_guardrails=[watch])
    result = await agent.run("book")
    assert result.output == "booked 4E" and ran == ["4E"]
    assert checked == ["booked 4E"]


async def test_an_agent_with_typed_output_is_a_guardrail_and_its_calls_are_counted() -> None:
    def judged(guarded: bool) -> Any:
        judge = Agent(
            "relevance",
            system="Is this about flights?",
            model=ScriptedModel(['{"tripped": false, "reason": "on topic"}']),
            output_type=Verdict,
        )
        agent = Agent(
            "triage", model=ScriptedModel(["Hello"]), input_guardrails=[judge] if guarded else []
        )
        return judge, Network("air", agents=[agent])

    judge, network = judged(True)
    result = await network.run("my flight")
    assert result.output == "Hello"
    assert judge.model.requests[0].history[-1].content == "my flight"  # type: ignore[union-attr]
    _, bare = judged(False)
    alone = await bare.run("my flight")
    judge_tokens = len('{"tripped": false, "reason": "on topic"}') // 4 or 1
    # the guardrail's tokens are the run's too
    assert result.usage.total_tokens > alone.usage.total_tokens
    assert result.usage.total_tokens - alone.usage.total_tokens >= judge_tokens // 2


async def test_a_tripping_agent_guardrail_carries_its_typed_answer() -> None:
    judge = Agent(
        "relevance",
        model=ScriptedModel(['{"tripped": true, "reason": "about cooking"}']),
        output_type=Verdict,
    )
    agent = Agent("triage", model=SlowModel(["never"], delay=30), input_guardrails=[judge])
    with anyio.fail_after(10):
        result = await Network("air", agents=[agent]).run("a recipe?")
    assert result.stop_reason == "guardrail"
    assert result.guardrail.guardrail == "relevance"
    assert result.guardrail.info == Verdict(tripped=True, reason="about cooking")


async def test_an_agent_guardrail_may_say_how_to_read_its_answer() -> None:
    class Relevance(BaseModel):
        is_relevant: bool

    judge = Agent(
        "relevance",
        model=ScriptedModel(['{"is_relevant": false}']),
        output_type=Relevance,
    )
    guard = input_guardrail(judge, tripped=lambda answer: not answer.is_relevant)
    agent = Agent("triage", model=ScriptedModel(["hi"]), input_guardrails=[guard])
    result = await Network("air", agents=[agent]).run("weather?")
    assert result.stop_reason == "guardrail"
    with pytest.raises(ConfigurationError, match="tripped: bool"):
        Agent("a", input_guardrails=[judge])


async def test_usage_limits_count_the_guardrails_model_calls() -> None:
    # The case: a guardrail agent beside every turn; max_model_calls=3 allows one turn
    # of two requests, and the next turn stops before its guardrail could pass the cap.
    judge = Agent(
        "relevance",
        model=ScriptedModel(['{"tripped": false, "reason": "ok"}'], repeat_last=True),
        output_type=Verdict,
    )
    first = Agent("first", model=ScriptedModel(["one"]), input_guardrails=[judge])
    second = Agent("second", model=ScriptedModel(["two"]), input_guardrails=[judge])

    def route(ctx: Any) -> Any:
        return [first, second][ctx.call_count] if ctx.call_count < 2 else None

    network = Network("n", agents=[first, second], router=route)
    result = await network.run("go", limits=UsageLimits(max_model_calls=3))
    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert result.limit_exceeded is not None and result.limit_exceeded.limit == "max_model_calls"
    assert [r.agent for r in result.results] == ["first"]  # the second call committed nothing
    assert len(judge.model.requests) == 1  # type: ignore[union-attr]
    assert second.model.requests == []  # type: ignore[union-attr]  # nor was it asked
    figures = result.limit_exceeded.figures
    assert figures.model_calls == 2  # first's request and its guardrail's


async def test_network_guardrails_check_the_entry_agent_and_every_final_answer() -> None:
    inputs: list[tuple[str, str]] = []
    outputs: list[tuple[str, str]] = []

    @input_guardrail
    def entry(ctx: Any, text: str) -> GuardrailResult:
        inputs.append((ctx.agent.name, text))
        return GuardrailResult.allow()

    @output_guardrail
    def final(ctx: Any, answer: str) -> GuardrailResult:
        outputs.append((ctx.agent.name, answer))
        return GuardrailResult.trip("no") if "secret" in answer else GuardrailResult.allow()

    triage = Agent("triage", model=ScriptedModel(["routing you"]))
    faq = Agent("faq", model=ScriptedModel(["the secret answer"]), output_key="faq")

    def route(ctx: Any) -> Any:
        return [triage, faq][ctx.call_count] if ctx.call_count < 2 else None

    network = Network(
        "support",
        agents=[triage, faq],
        router=route,
        input_guardrails=[entry],
        output_guardrails=[final],
    )
    result = await network.run("question")
    assert inputs == [("triage", "question")]  # the entry agent only
    assert outputs == [("triage", "routing you"), ("faq", "the secret answer")]
    assert result.stop_reason == "guardrail" and result.guardrail.agent == "faq"
    assert [r.agent for r in result.results] == ["triage"]  # faq's answer was not committed
    assert "faq" not in result


async def test_a_trip_on_a_thread_commits_the_users_message_only(tmp_path: Path) -> None:
    store = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}")
    book, ran = counting_tool()
    model = SlowModel([[call("book", seat="5F")]], delay=30)
    agent = Agent(
        "booker", model=model, tools=[book], output_key="answer", input_guardrails=[no_homework]
    )
    network = Network("air", agents=[agent])
    thread = ThreadRef("t1", store=store)
    try:
        with anyio.fail_after(10):
            result = await network.run("homework: book 5F", thread=thread)
        assert result.stop_reason == "guardrail" and result.persisted
        stored = await store.get_thread("t1")
        assert stored is not None
        assert [m.content for m in stored.messages] == ["homework: book 5F"]
        assert list(stored.results) == [] and stored.state == {}
        assert (model.finished, ran) == (0, [])
        # the application answers the user: the conversation stays well formed
        await network.add_messages(thread, [AssistantMessage("I can't help with homework.")])
        stored = await store.get_thread("t1")
        assert stored is not None
        assert [m.role for m in stored.messages] == ["user", "assistant"]
    finally:
        await store.close()


async def test_guardrails_are_checked_when_they_are_given() -> None:
    with pytest.raises(ConfigurationError, match="not a guardrail"):
        Agent("a", input_guardrails=[42])
    with pytest.raises(ConfigurationError, match="must be a list"):
        Agent("a", input_guardrails=no_homework)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="is a input guardrail"):
        Agent("a", output_guardrails=[no_homework])
    with pytest.raises(ConfigurationError, match="two input guardrails"):
        Agent("a", input_guardrails=[no_homework, no_homework])
    with pytest.raises(ConfigurationError, match="blocking= is for input"):
        Guardrail(
            lambda ctx, answer: GuardrailResult.allow(), kind="output", name="x", blocking=True
        )


async def test_a_guardrail_that_returns_something_else_fails_the_run_naming_it() -> None:
    def sloppy(ctx: Any, text: str) -> bool:
        return True

    agent = Agent("a", model=ScriptedModel(["hi"]), input_guardrails=[sloppy])
    with pytest.raises(ConfigurationError, match="guardrail 'sloppy' returned bool"):
        await Network("n", agents=[agent]).run("x")


async def test_a_guardrail_that_raises_fails_the_run_with_its_error() -> None:
    def broken(ctx: Any, text: str) -> GuardrailResult:
        raise RuntimeError("classifier down")

    agent = Agent("a", model=SlowModel(["hi"], delay=30), input_guardrails=[broken])
    with anyio.fail_after(10), pytest.raises(RuntimeError, match="classifier down") as raised:
        await Network("n", agents=[agent]).run("x")
    assert raised.value.partial_result.results == []  # type: ignore[attr-defined]


async def test_a_streamed_call_cut_short_by_a_trip_closes_what_it_opened() -> None:
    from agents.models.base import TextDelta

    class Streaming:
        name = "streaming"
        provider = "scripted"

        async def complete(self, request: Any, on_chunk: Any = None) -> Any:
            if on_chunk is not None:
                await on_chunk(TextDelta("Sure, "))
            streamed.set()
            await anyio.sleep(30)
            raise AssertionError("cancelled before it answers")

    streamed = anyio.Event()

    @input_guardrail
    async def refuse(ctx: Any, text: str) -> GuardrailResult:
        await streamed.wait()  # the call's message is open
        return GuardrailResult.trip("secret reason")

    agent = Agent("a", model=Streaming(), input_guardrails=[refuse])  # type: ignore[arg-type]
    seen: list[Any] = []
    with anyio.fail_after(10):
        async for event in Network("n", agents=[agent]).stream("hi"):
            seen.append(event)
    kinds = [str(event.type).split(".")[-1] for event in seen]
    assert kinds == [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "CUSTOM",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]
    assert seen[6].name == "GuardrailTripped"
    assert seen[6].value == {"guardrail": "refuse", "kind": "input", "agent": "a"}
    assert "secret reason" not in repr(seen[6])  # what it said stays with the application
    assert seen[-1].result == {"output": None, "stopReason": "guardrail"}


async def test_a_trip_in_a_parallel_branch_stops_the_run_and_merges_nothing() -> None:
    from network import Parallel

    @output_guardrail
    def no_secrets(ctx: Any, answer: str) -> GuardrailResult:
        return GuardrailResult.trip("secret") if "secret" in answer else GuardrailResult.allow()

    calm = Agent("calm", model=ScriptedModel(["fine"], repeat_last=True), output_key="calm")
    leaky = Agent(
        "leaky", model=ScriptedModel(["a secret"], repeat_last=True), output_key="leaky",
        output_guardrails=[no_secrets],
    )  # fmt: skip

    def route(ctx: Any) -> Any:
        return Parallel(calm, leaky) if ctx.call_count == 0 else None

    network = Network("n", agents=[calm, leaky], router=route)
    result = await network.run("go", limits=UsageLimits(max_model_calls=10))
    assert result.stop_reason == "guardrail"
    assert (result.guardrail.agent, result.guardrail.kind) == ("leaky", "output")
    assert result.results == [] and "calm" not in result and "leaky" not in result
    # streamed, every step the fan-out opened is closed before the run finishes
    opened: list[str] = []
    async for event in network.stream("go again"):
        kind = str(event.type).split(".")[-1]
        if kind == "STEP_STARTED":
            opened.append(event.step_name)
        elif kind == "STEP_FINISHED":
            opened.remove(event.step_name)
        elif kind == "RUN_FINISHED":
            assert opened == [] and event.result["stopReason"] == "guardrail"


async def test_a_trip_in_a_branch_that_continues_is_the_branchs_failure_not_the_runs() -> None:
    # Before, the run finished ("router_finished", the calm branch's answer its output) and
    # still carried the trip as `result.guardrail`, the field that says a guardrail stopped it.
    from network import Parallel

    @output_guardrail
    def no_secrets(ctx: Any, answer: str) -> GuardrailResult:
        return GuardrailResult.trip("secret") if "secret" in answer else GuardrailResult.allow()

    calm = Agent("calm", model=ScriptedModel(["fine"]), output_key="calm")
    leaky = Agent("leaky", model=ScriptedModel(["a secret"]), output_guardrails=[no_secrets])

    def route(ctx: Any) -> Any:
        return Parallel(calm, leaky, on_error="continue") if ctx.call_count == 0 else None

    result = await Network("n", agents=[calm, leaky], router=route).run("go")
    assert result.stop_reason == "router_finished" and result["calm"] == "fine"
    assert result.guardrail is None
    (failed,) = result.failed_branches
    assert (failed.agent, failed.error_type) == ("leaky", "GuardrailTripped")


async def test_a_streamed_run_reports_the_guardrails_usage_by_model() -> None:
    judge = Agent(
        "relevance",
        model=ScriptedModel(['{"tripped": false, "reason": "ok"}'], name="judge-model"),
        output_type=Verdict,
    )
    agent = Agent(
        "triage", model=ScriptedModel(["Hello"], name="agent-model"), input_guardrails=[judge]
    )
    finished: list[Any] = []
    async for event in Network("air", agents=[agent]).stream("flight", limits=UsageLimits()):
        if str(event.type).endswith("RUN_FINISHED"):
            finished.append(event)
    usage = {entry.model: entry for entry in finished[0].usage}
    assert set(usage) == {"judge-model", "agent-model"}  # none left unattributed
    assert usage["judge-model"].output_tokens > 0
