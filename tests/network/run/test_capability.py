"""The seam: a capability's stages run where `network.run.capability` says, in its order.

A toy capability records every stage it sees; the tests read the record. Nothing here knows a
built-in feature: they are what a new capability's author relies on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import (
    AgentCall,
    Capability,
    InferenceResult,
    ModelCall,
    Network,
    RunContext,
    Stop,
    ToolCall,
    ToolCallRecord,
    ToolUse,
)
from network.errors import RunStopped
from network.history.model_io import ModelRequest, ModelResponse
from network.run.capability import ModelProceed, ResumeProceed
from network.run.interrupts import Answer, Interrupt

pytestmark = pytest.mark.anyio


@tool
def add(item: str, ctx: ToolContext) -> str:
    """Add an item."""
    ctx.kv.set("items", [item])
    return f"added {item}"


class Recorder(Capability):
    """Every stage it implements writes `(label, stage)` to a shared log."""

    def __init__(self, label: str, log: list[tuple[str, str]]) -> None:
        self.label = label
        self.log = log

    def next_call(self, run: RunContext) -> Stop | None:
        self.log.append((self.label, "next_call"))
        return None

    async def run_started(self, run: RunContext) -> None:
        self.log.append((self.label, "run_started"))

    async def wrap_call(
        self, call: AgentCall, proceed: Callable[[], Awaitable[InferenceResult]]
    ) -> InferenceResult:
        self.log.append((self.label, "wrap_call"))
        return await proceed()

    async def instructions(self, call: AgentCall, text: str) -> str:
        self.log.append((self.label, "instructions"))
        return f"{text} [{self.label}]"

    async def request(self, call: AgentCall) -> None:
        self.log.append((self.label, "request"))

    async def wrap_model(
        self, call: AgentCall, request: ModelRequest, proceed: ModelProceed
    ) -> ModelResponse:
        self.log.append((self.label, "wrap_model"))
        return await proceed(request)

    async def answer(self, call: AgentCall, response: ModelResponse) -> ModelResponse:
        self.log.append((self.label, "answer"))
        return response

    async def tool_calls(self, call: AgentCall, calls: list[ToolCall]) -> list[ToolCall]:
        self.log.append((self.label, "tool_calls"))
        return calls

    async def wrap_tool(
        self, use: ToolUse, proceed: Callable[[], Awaitable[ToolCallRecord]]
    ) -> ToolCallRecord:
        self.log.append((self.label, f"wrap_tool {use.call.name}"))
        return await proceed()

    async def tool_results(
        self, call: AgentCall, records: list[ToolCallRecord]
    ) -> list[ToolCallRecord]:
        self.log.append((self.label, "tool_results"))
        return records

    async def output(self, call: AgentCall, value: Any) -> Any:
        self.log.append((self.label, "output"))
        return value

    async def record(self, call: AgentCall, result: InferenceResult) -> InferenceResult:
        self.log.append((self.label, "record"))
        return result


def worker(*capabilities: Capability) -> Agent:
    script = ScriptedModel([call("add", item="a"), "done"])
    return Agent("worker", system="Work.", tools=[add], model=script, capabilities=capabilities)


def loop(agent: Agent) -> Any:
    def router(ctx: RunContext) -> Any:
        return agent if ctx.last_result is None or ctx.last_result.tool_calls else None

    return router


async def test_every_stage_runs_in_order_on_the_way_in_and_in_reverse_on_the_way_out() -> None:
    log: list[tuple[str, str]] = []
    agent = worker(Recorder("own", log))
    network = Network(
        "n", agents=[agent], router=loop(agent), capabilities=[Recorder("network", log)]
    )
    result = await network.run("go")
    assert result["items"] == ["a"] and result.output == "done"
    # the run's stages are the network's (and the run's): an agent's capability has none
    first_call = log[: log.index(("network", "next_call"), 2)]
    assert first_call == [
        ("network", "run_started"),
        ("network", "next_call"),
        ("own", "wrap_call"),
        ("network", "wrap_call"),
        ("own", "instructions"),
        ("network", "instructions"),
        ("own", "request"),
        ("network", "request"),
        ("own", "wrap_model"),
        ("network", "wrap_model"),
        ("network", "answer"),  # the way out: the network's first, the agent's last word
        ("own", "answer"),
        ("own", "tool_calls"),
        ("network", "tool_calls"),
        ("own", "wrap_tool add"),
        ("network", "wrap_tool add"),
        ("network", "tool_results"),
        ("own", "tool_results"),
        ("network", "record"),
        ("own", "record"),
    ]
    # the second call answers: the output stage runs, on the way out
    assert log[-4:] == [
        ("network", "output"),
        ("own", "output"),
        ("network", "record"),
        ("own", "record"),
    ]
    assert result.results[0].prompt[0].content == "Work. [own] [network]"


class Shout(Capability):
    """Only instructions: the toy of docs/capabilities.md."""

    async def instructions(self, call: AgentCall, text: str) -> str:
        return text.upper()


async def test_a_capability_needs_no_wiring_but_capabilities() -> None:
    agent = Agent("a", system="be loud", model=ScriptedModel(["OK"]), capabilities=[Shout()])
    result = await Network("n", agents=[agent]).run("hi")
    assert result.results[0].prompt[0].content == "BE LOUD"
    assert agent.capabilities[-1].__class__ is Shout


async def test_a_stage_an_instance_turns_off_is_never_called() -> None:
    log: list[tuple[str, str]] = []
    quiet = Recorder("quiet", log)
    quiet.answer = None  # type: ignore[assignment,method-assign]
    quiet.record = None  # type: ignore[assignment,method-assign]
    agent = Agent("a", model=ScriptedModel(["hi"]), capabilities=[quiet])
    await Network("n", agents=[agent]).run("go")
    stages = [stage for _, stage in log]
    assert "answer" not in stages and "record" not in stages and "output" in stages


class Policy(Capability):
    agent_overrides_network: ClassVar[bool] = True

    def __init__(self, name: str) -> None:
        self.name = name

    async def instructions(self, call: AgentCall, text: str) -> str:
        return f"{text}|{self.name}"


async def test_an_agents_capability_replaces_its_networks_default_of_the_same_class() -> None:
    own = Agent("own", model=ScriptedModel(["x"]), system="s", capabilities=[Policy("mine")])
    other = Agent("other", model=ScriptedModel(["y"]), system="s")
    network = Network(
        "n",
        agents=[own, other],
        router=lambda ctx: [own, other] if ctx.last_result is None else None,
        capabilities=[Policy("default")],
    )
    result = await network.run("go")
    prompts = {r.agent: r.prompt[0].content for r in result.results}
    assert prompts == {"own": "s|mine", "other": "s|default"}


class Tags(Capability):
    merge: ClassVar[bool] = True

    def __init__(self, *tags: str) -> None:
        self.tags = tags

    @classmethod
    def merge_all(cls, found: Any) -> Capability:
        return cls(*(tag for part in found for tag in part.tags))

    async def instructions(self, call: AgentCall, text: str) -> str:
        return f"{text} {'+'.join(self.tags)}"


async def test_capabilities_of_a_merging_class_run_as_one() -> None:
    agent = Agent("a", system="s", model=ScriptedModel(["x"]), capabilities=[Tags("agent")])
    network = Network("n", agents=[agent], capabilities=[Tags("network")])
    result = await network.run("go")
    assert result.results[0].prompt[0].content == "s agent+network"


class Early(Capability):
    order: ClassVar[int] = -1

    async def request(self, call: AgentCall) -> None:
        call.history = [*call.history][-1:]  # what the others read


class Reader(Capability):
    def __init__(self, seen: list[int]) -> None:
        self.seen = seen

    async def request(self, call: AgentCall) -> None:
        self.seen.append(len(call.history))


async def test_a_lower_order_runs_first_whoever_declared_it() -> None:
    seen: list[int] = []
    agent = Agent("a", model=ScriptedModel(["x"]), capabilities=[Reader(seen)])
    network = Network("n", agents=[agent], capabilities=[Early()])
    await network.run("go", state=None)
    assert seen == [1]


class Brings(Capability):
    def __init__(self, brought: Capability) -> None:
        self.brought = brought

    def for_network(self) -> Capability:
        return self.brought


async def test_an_agents_capability_brings_one_to_every_agent_of_its_network() -> None:
    shout = Shout()
    carrier = Agent("carrier", system="a", model=ScriptedModel(["x"]), capabilities=[Brings(shout)])
    plain = Agent("plain", system="b", model=ScriptedModel(["y"]))
    twin = Agent("twin", system="c", model=ScriptedModel(["z"]), capabilities=[Brings(shout)])
    network = Network(
        "n",
        agents=[carrier, plain, twin],
        router=lambda ctx: [carrier, plain, twin] if ctx.last_result is None else None,
    )
    assert [c for c in network.capabilities if c is shout] == [shout]  # brought once
    result = await network.run("go")
    assert [r.prompt[0].content for r in result.results] == ["A", "B", "C"]


class Cap(Capability):
    """Stops the run before a second agent call, and keeps a count per run."""

    def next_call(self, run: RunContext) -> Stop | None:
        counted = run.local(Cap, lambda: [0])
        counted[0] += 1
        return Stop("capped", "one call only") if counted[0] > 1 else None


async def test_next_call_ends_the_run_and_per_run_state_stays_with_the_run() -> None:
    always = ScriptedModel(lambda request: call("add", item="a"))
    agent = Agent("worker", tools=[add], model=always)
    network = Network("n", agents=[agent], router=loop(agent), capabilities=[Cap()])
    first, second = await network.run("go"), await network.run("again")
    for result in (first, second):
        assert result.stop_reason == "capped" and len(result.results) == 1
        assert result.summary == "one call only"


class Refuse(Capability):
    """Stops the run from inside a call, after writing state: nothing of the call stays."""

    async def wrap_tool(
        self, use: ToolUse, proceed: Callable[[], Awaitable[ToolCallRecord]]
    ) -> ToolCallRecord:
        await proceed()
        raise RunStopped("no more", summary="refused")


async def test_a_capability_raising_run_stopped_ends_the_run_with_its_reason() -> None:
    agent = worker(Refuse())
    result = await Network("n", agents=[agent], router=loop(agent)).run("go")
    assert result.stop_reason == "stopped" and result.summary == "refused"
    assert result.results == [] and "items" not in result


class CountsRequests(Capability):
    def __init__(self, counts: list[int]) -> None:
        self.counts = counts

    async def record(self, call: AgentCall, result: InferenceResult) -> InferenceResult:
        self.counts.append(len(call.requests))
        noted = call.note(CountsRequests, lambda: ["kept"])
        assert noted is call.note(CountsRequests, list)  # one note per key per call
        return result


async def test_a_calls_requests_are_there_when_the_run_records_them() -> None:
    from network import UsageLimits

    counts: list[int] = []
    model = ScriptedModel(lambda request: "x")
    agent = Agent("a", model=model, capabilities=[CountsRequests(counts)])
    await Network("n", agents=[agent]).run("go")
    await Network("n", agents=[agent]).run("go", limits=UsageLimits(max_model_calls=5))
    assert counts == [0, 1]  # recorded only when limits or traces read them
    assert isinstance(ModelCall, type)


class AsksForAColour(Capability):
    """An interrupt of its own kind, taken up by the capability: an answer asking for a
    colour stops the run; the colour given is written to state and the agent called again."""

    def __init__(self) -> None:
        self.taken: list[str] = []

    async def answer(self, call: AgentCall, response: ModelResponse) -> ModelResponse:
        if response.message.content == "which colour?":
            asked = Interrupt(
                reason="colour", tool_call_id="colour-1", tool="colour", agent=call.agent.name
            )
            call.run.engine.interrupts = (*call.run.engine.interrupts, asked)
        return response

    async def wrap_resume(
        self, run: RunContext, answered: list[tuple[Interrupt, Answer]], proceed: ResumeProceed
    ) -> InferenceResult:
        mine = [(i, a) for i, a in answered if i.reason == "colour"]
        if not mine or run.agent is None:
            return await proceed(answered)
        self.taken.append(mine[0][1].response)
        run.state.kv.set("colour", mine[0][1].response)
        return await run.agent.call(run)


async def test_a_capability_takes_up_the_answers_to_its_own_interrupts() -> None:
    asks = AsksForAColour()
    model = ScriptedModel(["which colour?", "painted"])
    painter = Agent("painter", system="Paint it {colour?}.", model=model, capabilities=[asks])
    network = Network("n", agents=[painter])
    stopped = await network.run("paint the door")
    assert stopped.stop_reason == "interrupted" and [i.reason for i in stopped.interrupts] == [
        "colour"
    ]
    done = await network.run(stopped.resume([stopped.interrupts[0].respond("blue")]))
    assert asks.taken == ["blue"]
    assert done.output == "painted" and done["colour"] == "blue"
    assert done.results[-1].prompt[0].content == "Paint it blue."
    assert done.results[-1].tool_calls == []  # no record of a "colour" tool call was made


class AsksForColours(Capability):
    """Interrupts of its own kind that each need a call of their own: an answer asking for
    colours stops the run on two; `resume_calls` gives each answer its call, in which
    `wrap_resume` paints one colour."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def answer(self, call: AgentCall, response: ModelResponse) -> ModelResponse:
        if response.message.content == "which colours?":
            asked = tuple(
                Interrupt(reason="colour", tool_call_id=f"colour-{n}", tool="colour", agent="a")
                for n in (1, 2)
            )
            call.run.engine.interrupts = (*call.run.engine.interrupts, *asked)
        return response

    def resume_calls(
        self, run: RunContext, calls: list[list[tuple[Interrupt, Answer]]]
    ) -> list[list[tuple[Interrupt, Answer]]]:
        regrouped: list[list[tuple[Interrupt, Answer]]] = []
        for answered in calls:
            regrouped += [[pair] for pair in answered if pair[0].reason == "colour"]
            rest = [pair for pair in answered if pair[0].reason != "colour"]
            regrouped += [rest] if rest else []
        return regrouped

    async def wrap_resume(
        self, run: RunContext, answered: list[tuple[Interrupt, Answer]], proceed: ResumeProceed
    ) -> InferenceResult:
        self.calls.append([interrupt.tool_call_id for interrupt, _ in answered])
        if run.agent is None or answered[0][0].reason != "colour":
            return await proceed(answered)
        run.state.kv.set("colour", answered[0][1].response)
        return await run.agent.call(run)


async def test_a_capability_groups_the_answers_to_its_own_interrupts_into_calls() -> None:
    asks = AsksForColours()
    model = ScriptedModel(["which colours?", "painted one", "painted two"])
    painter = Agent("a", system="Paint it {colour?}.", model=model, capabilities=[asks])
    network = Network("n", agents=[painter])
    stopped = await network.run("paint the doors")
    assert [i.tool_call_id for i in stopped.interrupts] == ["colour-1", "colour-2"]
    answers = [stopped.interrupts[0].respond("blue"), stopped.interrupts[1].respond("red")]
    done = await network.run(stopped.resume(answers))
    assert asks.calls == [["colour-1"], ["colour-2"]]  # one call each, in the order asked
    assert [r.prompt[0].content for r in done.results[-2:]] == ["Paint it blue.", "Paint it red."]
    assert done.output == "painted two"


class Resumed(Capability):
    """Records what the run's `resumed` stage sees: the conversation's last message and the
    error; `fails`: its agents' `wrap_resume` raises (a remote agent that errs)."""

    def __init__(self, fails: bool = False) -> None:
        self.seen: list[tuple[Any, str | None]] = []
        self.fails = fails

    async def wrap_resume(
        self, run: RunContext, answered: list[tuple[Interrupt, Answer]], proceed: ResumeProceed
    ) -> InferenceResult:
        if self.fails:
            raise RuntimeError("the remote agent failed")
        return await proceed(answered)

    async def resumed(self, run: RunContext, error: BaseException | None) -> None:
        last = run.state.messages[-1]
        self.seen.append(((last.role, last.content), None if error is None else str(error)))


@pytest.mark.parametrize("fails", [False, True])
async def test_resumed_runs_once_the_answered_calls_are_taken_up(fails: bool) -> None:
    @tool(requires_confirmation=True)
    def save(title: str) -> str:
        """Save it."""
        return f"saved {title}"

    stage = Resumed(fails)
    model = ScriptedModel([call("save", title="t")])
    network = Network("n", agents=[Agent("a", model=model, tools=[save])], capabilities=[stage])
    stopped = await network.run("save it")
    assert stage.seen == []  # a run that takes up no answers has no `resumed` stage
    answer = stopped.resume([stopped.interrupts[0].accept()])
    if fails:
        with pytest.raises(RuntimeError, match="the remote agent failed"):
            await network.run(answer)
        assert stage.seen == [(("assistant", None), "the remote agent failed")]
        return
    done = await network.run(answer)
    assert stage.seen == [(("tool", "saved t"), None)]  # once, after the call's result
    assert done.stop_reason == "router_finished"


def test_capabilities_must_be_capabilities() -> None:
    from network.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="is not a Capability"):
        Agent("a", capabilities=[object()])  # type: ignore[list-item]
    shout = Shout()
    with pytest.raises(ConfigurationError, match="given twice"):
        Network("n", agents=[Agent("a")], capabilities=[shout, shout])
    # one capability not in a list, or a set (no order), was a TypeError: "not iterable"
    with pytest.raises(ConfigurationError, match=r"must be a list .* \(put it in a list\)"):
        Network("n", agents=[Agent("a")], capabilities=shout)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="agent 'a': capabilities must be a list"):
        Agent("a", capabilities={shout})  # type: ignore[arg-type]
    assert Agent("a", capabilities=None).capabilities == ()  # type: ignore[arg-type]


class Unawaitable(Capability):
    """An `instructions` written `def`: the run awaits it."""

    def instructions(self, call: AgentCall, text: str) -> str:  # type: ignore[override]
        return text + "!"


class UnawaitableResumed(Capability):
    """A `resumed` written `def`: the run awaits it."""

    def resumed(self, run: RunContext, error: BaseException | None) -> None:  # type: ignore[override]
        return None


class AwaitedNextCall(Capability):
    """A `next_call` written `async def`: the run does not await it."""

    async def next_call(self, run: RunContext) -> Stop | None:  # type: ignore[override]
        return None


@pytest.mark.parametrize(
    ("capability", "said"),
    [
        (Unawaitable(), "Unawaitable.instructions must be async def"),
        (AwaitedNextCall(), r"AwaitedNextCall.next_call must be a plain def"),
        (UnawaitableResumed(), "UnawaitableResumed.resumed must be async def"),
    ],
)
def test_a_stage_of_the_wrong_kind_is_refused_when_it_is_given(
    capability: Capability, said: str
) -> None:
    # Before, the first run failed in the middle: a TypeError ("object str can't be used in
    # 'await' expression"), or an AttributeError on the coroutine next_call returned.
    from network.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=said):
        Network("n", agents=[Agent("a")], capabilities=[capability])
    with pytest.raises(ConfigurationError, match=said):
        Agent("a", capabilities=[capability])


class SaysAName(Capability):
    """A `next_call` answering what is no `Stop`."""

    def next_call(self, run: RunContext) -> Stop | None:
        return "a"  # type: ignore[return-value]


async def test_a_next_call_that_answers_no_stop_is_named() -> None:
    # was an AttributeError: 'str' object has no attribute 'reason'
    from network.errors import ConfigurationError

    network = Network("n", agents=[Agent("a", model=ScriptedModel(["ok"]))])
    with pytest.raises(ConfigurationError, match=r"SaysAName.next_call returned 'a'"):
        await network.with_capabilities(SaysAName()).run("x")


class Forgetful(Capability):
    """An `answer` and a `record` that forgot to return."""

    def __init__(self, stage: str) -> None:
        if stage != "answer":
            self.answer = None  # type: ignore[assignment]
        if stage != "record":
            self.record = None  # type: ignore[assignment]

    async def answer(self, call: AgentCall, response: ModelResponse) -> ModelResponse:
        return None  # type: ignore[return-value]

    async def record(self, call: AgentCall, result: InferenceResult) -> InferenceResult:
        return None  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("stage", "kind"), [("answer", "ModelResponse"), ("record", "InferenceResult")]
)
async def test_a_stage_that_returns_nothing_is_named(stage: str, kind: str) -> None:
    # was an AttributeError on None ('NoneType' object has no attribute 'message')
    from network.errors import ConfigurationError

    network = Network("n", agents=[Agent("a", model=ScriptedModel(["ok"]))])
    with pytest.raises(ConfigurationError, match=rf"Forgetful.{stage} returned None: .* {kind}"):
        await network.with_capabilities(Forgetful(stage)).run("x")
