"""The run loop: fresh state per run, the router contract, stop reasons, errors."""

import dataclasses
from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, RoutingError, Stop, StopReason


def text_agent(name: str, *answers: str) -> Agent:
    return Agent(name, model=ScriptedModel(list(answers)))


@pytest.mark.anyio
async def test_every_run_gets_a_deep_copy_of_the_initial_state() -> None:
    @tool
    def touch(ctx: ToolContext) -> str:
        config = ctx.kv.get("config")
        config["nested"]["seen"] += 1
        ctx.kv.set("config", config)
        return "ok"

    worker = Agent("worker", tools=[touch], model=ScriptedModel(lambda r: call("touch")))
    network = Network(
        "n", agents=[worker], router=lambda ctx: worker if ctx.call_count == 0 else None
    )
    seed = {"config": {"nested": {"seen": 0}}}

    first = await network.run("go", state=seed)
    second = await network.run("go", state=seed)

    assert seed == {"config": {"nested": {"seen": 0}}}  # the caller's object is untouched
    assert first["config"]["nested"]["seen"] == 1
    assert second["config"]["nested"]["seen"] == 1  # no leak from the first run
    assert first.state is not second.state
    assert network.agents == {"worker": worker}  # the definition is unchanged


@pytest.mark.anyio
async def test_router_sees_context_and_queued_lists_run_in_order() -> None:
    a, b, c = text_agent("a", "A"), text_agent("b", "B"), text_agent("c", "C")
    seen = []

    def router(ctx):
        seen.append(
            (
                ctx.call_count,
                ctx.last_result.agent if ctx.last_result else None,
                [agent.name for agent in ctx.stack],
                ctx.input,
                ctx.network.name,
            )
        )
        if ctx.call_count == 0:
            return [a, b, c]
        return None

    result = await Network("team", agents=[a, b, c], router=router).run("hello")

    assert [r.agent for r in result.results] == ["a", "b", "c"]
    assert seen == [
        (0, None, [], "hello", "team"),
        (1, "a", ["b", "c"], "hello", "team"),  # called after every call, queue visible
        (2, "b", ["c"], "hello", "team"),
        (3, "c", [], "hello", "team"),
    ]
    assert result.stop_reason == StopReason.ROUTER_FINISHED
    assert result.output == "C"


@pytest.mark.anyio
async def test_router_names_agents_by_string_and_async_routers_work() -> None:
    a = text_agent("a", "one")

    async def router(ctx):
        return "a" if ctx.call_count == 0 else None

    result = await Network("n", agents=[a], router=router).run("x")
    assert [r.agent for r in result.results] == ["a"]


@pytest.mark.anyio
async def test_max_iter_caps_agent_calls() -> None:
    loop = Agent("loop", model=ScriptedModel(["again"], repeat_last=True))
    result = await Network("n", agents=[loop], router=lambda ctx: loop, max_iter=3).run("x")
    assert len(result.results) == 3
    assert result.stop_reason == StopReason.MAX_ITER
    override = await Network("n", agents=[loop], router=lambda ctx: loop, max_iter=3).run(
        "x", max_iter=2
    )
    assert len(override.results) == 2


@pytest.mark.anyio
async def test_router_stop_carries_reason_and_summary() -> None:
    a = text_agent("a", "hi")
    router = lambda ctx: a if ctx.call_count == 0 else Stop("done", "all good")  # noqa: E731
    result = await Network("n", agents=[a], router=router).run("x")
    assert result.stop_reason == "done"
    assert result.summary == "all good"
    assert result.output == "hi"


@pytest.mark.parametrize(
    ("reason", "summary", "field"),
    [
        (3, None, "reason"),
        (None, None, "reason"),
        ("", None, "reason"),
        (float("nan"), None, "reason"),
        ("done", 5, "summary"),
        ("done", ["why"], "summary"),
    ],
)
def test_a_stop_that_says_nothing_usable_is_refused_naming_the_field(
    reason: object, summary: object, field: str
) -> None:
    """AgentKit's router ends a run by returning nothing; ours may say why with `Stop`, and
    what it says becomes `stop_reason` (compared with strings, stored, streamed): a reason
    that is not a non-empty string, or a summary that is not text, is a `RoutingError` when
    the router makes it, and the run ends on it instead of reporting `stop_reason=3`."""
    with pytest.raises(RoutingError, match=rf"Stop\.{field} must be"):
        Stop(reason, summary)  # type: ignore[arg-type]
    a = text_agent("a", "hi")
    network = Network(
        "n", agents=[a], router=lambda ctx: a if ctx.call_count == 0 else Stop(reason, summary)
    )
    with pytest.raises(RoutingError, match=rf"Stop\.{field}"):
        network.run_sync("x")


@pytest.mark.anyio
async def test_result_carries_output_state_results_and_usage() -> None:
    writer = Agent("writer", model=ScriptedModel(["first draft", "final text"]), output_key="out")
    network = Network(
        "n", agents=[writer], router=lambda ctx: writer if ctx.call_count < 2 else None
    )
    result = await network.run("write")
    assert result.output == "final text"
    assert result.state.kv.get("out") == "final text"
    assert len(result.results) == 2
    per_call = [r.usage.total_tokens for r in result.results]
    assert result.usage.total_tokens == sum(per_call) > 0
    assert result.run_id.startswith("run_")


@pytest.mark.anyio
async def test_unknown_agent_is_a_routing_error_with_the_partial_result() -> None:
    a = text_agent("a", "ok")
    network = Network("n", agents=[a], router=lambda ctx: a if ctx.call_count == 0 else "ghost")
    with pytest.raises(RoutingError, match="ghost") as caught:
        await network.run("x")
    assert caught.value.agent == "ghost"
    partial = caught.value.partial_result
    assert partial.stop_reason == StopReason.ERROR
    assert [r.agent for r in partial.results] == ["a"]


@pytest.mark.anyio
async def test_an_agent_object_not_in_the_network_is_a_routing_error() -> None:
    a, stranger = text_agent("a", "ok"), text_agent("stranger", "no")
    with pytest.raises(RoutingError, match="stranger"):
        await Network("n", agents=[a], router=lambda ctx: stranger).run("x")


@pytest.mark.anyio
async def test_any_error_inside_a_run_keeps_the_partial_result_reachable() -> None:
    a = text_agent("a", "ok")

    def router(ctx):
        if ctx.call_count == 1:
            raise ValueError("router bug")
        return a

    with pytest.raises(ValueError, match="router bug") as caught:
        await Network("n", agents=[a], router=router).run("x")
    assert [r.agent for r in caught.value.partial_result.results] == ["a"]


@pytest.mark.anyio
async def test_an_error_raised_again_carries_the_partial_result_of_the_run_it_left() -> None:
    shared = KeyError("one instance, raised by every run")  # a module-level sentinel, say

    def router(ctx):
        if ctx.call_count == 1:
            raise shared
        return "a"

    def network() -> Network:
        return Network("n", agents=[text_agent("a", "ok")], router=router)

    with pytest.raises(KeyError) as first:
        await network().run("first")
    first_run = first.value.partial_result.run_id
    with pytest.raises(KeyError) as second:
        await network().run("second")
    assert second.value.partial_result.run_id != first_run  # not the earlier run's result
    assert second.value.partial_result.messages[0].content == "second"


@pytest.mark.anyio
async def test_an_inner_runs_error_reaches_the_outer_caller_with_the_outer_partial() -> None:
    inner = Network("inner", agents=[text_agent("b", "ok")], router=lambda ctx: "ghost")
    seen: list[str] = []

    async def router(ctx):
        if ctx.call_count == 0:
            return "a"
        try:
            await inner.run("inner input")
        except RoutingError as error:  # the inner run's caller reads the inner run's result
            seen.append(error.partial_result.messages[0].content)
            raise
        return None

    outer = Network("outer", agents=[text_agent("a", "ok")], router=router)
    with pytest.raises(RoutingError) as caught:
        await outer.run("outer input")
    assert seen == ["inner input"]
    partial = caught.value.partial_result  # the outer caller reads the outer run's result
    assert [r.agent for r in partial.results] == ["a"]
    assert partial.messages[0].content == "outer input"


@pytest.mark.anyio
async def test_an_error_that_takes_no_attribute_still_reaches_the_caller_as_itself() -> None:
    @dataclasses.dataclass(frozen=True)
    class Frozen(Exception):  # a frozen dataclass refuses every attribute, `__notes__` too
        reason: str

    def router(ctx):
        raise Frozen("router bug")

    with pytest.raises(Frozen) as caught:  # was an AttributeError from add_note, in its place
        await Network("n", agents=[text_agent("a", "ok")], router=router).run("x")
    assert caught.value.reason == "router bug"


def test_run_sync_runs_the_same_loop() -> None:
    a = text_agent("a", "sync!")
    result = Network("n", agents=[a]).run_sync("x")
    assert result.output == "sync!"
    assert result.stop_reason == StopReason.ROUTER_FINISHED


def test_network_definition_errors_name_what_is_wrong() -> None:
    from network import ConfigurationError

    a = text_agent("a", "x")
    with pytest.raises(ConfigurationError, match="two agents are named 'a'"):
        Network("n", agents=[a, text_agent("a", "y")], router=lambda ctx: None)
    with pytest.raises(ConfigurationError, match=r"no router: pass router=routing_agent\(model\)"):
        Network("n", agents=[a, text_agent("b", "y")])
    with pytest.raises(ConfigurationError, match="max_iter"):
        Network("n", agents=[a], max_iter=0)


@pytest.mark.parametrize("agents", [None, 3, "bare agent"])
def test_agents_that_are_no_list_are_refused_naming_the_network(agents: object) -> None:
    """`Network("n", agents=one_agent)` was "'Agent' object is not iterable" (None, 3
    likewise), naming neither the network nor the option."""
    from network import ConfigurationError

    given = text_agent("a", "x") if agents == "bare agent" else agents
    with pytest.raises(ConfigurationError, match=r"network 'n': agents must be a list of agents"):
        Network("n", agents=given)  # type: ignore[arg-type]


@pytest.mark.parametrize("model", [3, "", {"api_base": "http://x"}, object()])
def test_a_default_model_that_is_no_model_is_refused_when_the_network_is_made(
    model: object,
) -> None:
    """`default_model=3` was accepted and failed at the first call, naming neither the
    network nor the option; it takes what `Agent(model=...)` takes."""
    from network import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"network 'n': default_model"):
        Network("n", agents=[Agent("a")], default_model=model)
    for valid in (None, "openai/gpt-4o-mini", {"model": "openai/x"}, ScriptedModel(["x"])):
        assert Network("n", agents=[Agent("a")], default_model=valid).default_model is valid


@pytest.mark.parametrize("model", [3, "", {"api_base": "http://x"}, object()])
def test_a_default_model_set_later_is_checked_as_the_constructors_and_kept_as_it_was(
    model: object,
) -> None:
    """`network.default_model = 3` was taken, and failed at the first call."""
    from network import ConfigurationError

    default = ScriptedModel(["x"])
    network = Network("n", agents=[Agent("a")], default_model=default)
    with pytest.raises(ConfigurationError, match=r"network 'n': default_model"):
        network.default_model = model
    assert network.default_model is default
    for valid in (None, "openai/gpt-4o-mini", {"model": "openai/x"}, ScriptedModel(["y"])):
        network.default_model = valid
        assert network.default_model is valid


def test_network_takes_default_model_and_max_iter_positionally() -> None:
    a = Agent("a")
    model = ScriptedModel(["positional"])
    network = Network(
        "n",
        agents=[a],
        router=lambda ctx: a if ctx.call_count == 0 else None,
        default_model=model,
        max_iter=7,
    )
    assert network.default_model is model and network.max_iter == 7
    assert network.run_sync("x").output == "positional"


@pytest.mark.anyio
async def test_a_run_leaves_the_network_definition_as_it_was() -> None:
    @tool
    def note(ctx: ToolContext) -> str:
        ctx.kv.set("notes", ["n"])
        return "ok"

    worker = Agent(
        "worker",
        system="Notes: {notes?}",
        tools=[note],
        model=ScriptedModel([call("note")], repeat_last=True),
        output_key="out",
    )
    network = Network(
        "n",
        agents=[worker],
        router=lambda ctx: worker if ctx.call_count < 2 else None,
        state_schema={"notes": {"type": list[str]}},
    )

    def definition() -> tuple:
        return (
            dict(network.agents),
            network.router,
            network.max_iter,
            network.schema.items(),
            dict(worker.tools),
            worker.system,
            worker.output_key,
            note.schema,
        )

    import copy

    before = definition()
    frozen = copy.deepcopy((worker.system, note.schema, network.schema.keys))
    await network.run("x")
    await network.run("y")
    assert definition() == before
    assert frozen == (worker.system, note.schema, network.schema.keys)


def test_a_stop_whose_cause_is_no_run_stopped_is_refused_naming_the_field() -> None:
    """`Stop.cause` is the `RunStopped` a capability ended the run with (the loop sets it):
    anything else is a `RoutingError` naming the field, not a result that reads it later."""
    with pytest.raises(RoutingError, match=r"Stop\.cause must be a RunStopped"):
        Stop("done", None, "a guardrail")  # type: ignore[arg-type]
    from network import RunStopped

    carried = Stop("done", None, RunStopped("why"))  # the cause is no part of what it says
    assert carried == Stop("done") and repr(carried) == repr(Stop("done"))


@pytest.mark.anyio
async def test_a_trip_an_applications_own_capability_raises_is_the_results_guardrail() -> None:
    """The run reads what stopped it from the exception that stopped it (`Stop.cause`), not
    from the guardrails' log: a `GuardrailTripped` raised by a capability of the
    application's (no guardrail ran) is `result.guardrail`. Before, the run stopped with
    "guardrail" and `result.guardrail` was None: only a trip the guardrails capability had
    logged reached the result."""
    from network import Capability, GuardrailTripped

    class Censor(Capability):
        async def output(self, call: Any, value: Any) -> Any:
            raise GuardrailTripped("censored", guardrail="censor", kind="output", agent="a")

    a = text_agent("a", "a secret")
    network = Network("n", agents=[a], capabilities=[Censor()])
    result = await network.run("go")
    assert result.stop_reason == "guardrail" and result.results == []
    assert result.guardrail is not None
    assert (result.guardrail.guardrail, result.guardrail.agent) == ("censor", "a")


@pytest.mark.anyio
async def test_a_routers_own_guardrail_stop_carries_no_trip_of_a_branch_that_continued() -> None:
    """A router's `Stop("guardrail")` has no trip: `result.guardrail` stays None even when a
    fan-out's branch tripped earlier under `on_error="continue"` (that trip is the branch's
    failure, `failed_branches`). Before, the branch's trip was the result's `guardrail`, as
    if it had stopped the run."""
    from agents import output_guardrail
    from network import GuardrailResult, Parallel

    @output_guardrail
    def no_secrets(ctx: Any, answer: str) -> GuardrailResult:
        return GuardrailResult.trip("secret") if "secret" in answer else GuardrailResult.allow()

    calm = text_agent("calm", "fine")
    leaky = Agent("leaky", model=ScriptedModel(["a secret"]), output_guardrails=[no_secrets])

    def route(ctx: Any) -> Any:
        if ctx.call_count == 0:
            return Parallel(calm, leaky, on_error="continue")
        return Stop("guardrail", "the router's own word")

    result = await Network("n", agents=[calm, leaky], router=route).run("go")
    assert result.stop_reason == "guardrail" and result.summary == "the router's own word"
    assert result.guardrail is None
    (failed,) = result.failed_branches
    assert failed.error_type == "GuardrailTripped"


@pytest.mark.anyio
async def test_a_handoff_an_applications_capability_records_is_followed() -> None:
    """A router that returns None lets the last call's handoff through (docs/handoffs.md),
    whoever recorded it: here an application's own capability, in a network none of whose
    agents has handoffs (so the handoffs capability brought it nothing). Following it is the
    run's rule over its history (`InferenceResult.handoff`), which is why the loop keeps it
    rather than a stage of the handoffs capability."""
    from network import Capability
    from network.history.handoffs import HandoffRecord

    class Escalate(Capability):
        async def record(self, call: Any, result: Any) -> Any:
            if "escalate" in (result.text or ""):
                result.handoff = HandoffRecord(source="bot", target="human", reason="asked")
            return result

    bot = Agent("bot", model=ScriptedModel(["escalate please"]), capabilities=[Escalate()])
    human = text_agent("human", "a person here")
    network = Network(
        "n", agents=[bot, human], router=lambda ctx: bot if ctx.call_count == 0 else None
    )
    result = await network.run("hi")
    assert [r.agent for r in result.results] == ["bot", "human"]
    assert result.stop_reason == "router_finished" and result.output == "a person here"
