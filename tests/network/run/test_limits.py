"""Usage limits: a run stops cleanly, with its own stop reason, before the request that would
pass a limit; its state and thread commits stay; the result says which limit and the figures."""

from __future__ import annotations

import warnings

import pytest

from agents import Agent, LiteLLMModel, ScriptedModel, call, tool
from examples.codegen import TASK, build_network
from network import (
    ConfigurationError,
    ModelError,
    Network,
    StopReason,
    ThreadRef,
    UnpricedModelWarning,
    UsageFigures,
    UsageLimits,
)
from network.history.messages import AssistantMessage, ToolCall
from network.history.model_io import ModelResponse
from network.history.results import ModelCall, Usage
from network.run.context import RunContext
from network.run.limits import NOTHING_UNRECORDED, Budget, Unrecorded
from network.state.state import State
from network.threads import MemoryStore
from routers import routing_agent
from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall
from tests.network.telemetry.ops_network import SECRET, build
from tests.network.telemetry.otel import Recorder

pytestmark = [pytest.mark.anyio, pytest.mark.litellm]
pytest_plugins = ["tests.fakes.openai_server"]


@tool
def again() -> str:
    """Keep going."""
    return "ok"


async def test_max_model_calls_stops_the_run_with_its_commits_intact(quiet_logs: None) -> None:
    store = MemoryStore()
    network = build_network()
    result = await network.run(
        TASK, thread=ThreadRef("t", store=store), limits=UsageLimits(max_model_calls=3)
    )
    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert [r.agent for r in result.results] == ["planner", "coder", "reviewer"]
    exceeded = result.limit_exceeded
    assert exceeded is not None
    assert (exceeded.limit, exceeded.value, exceeded.actual) == ("max_model_calls", 3, 3)
    assert exceeded.figures.model_calls == 3
    assert exceeded.figures.tool_calls == 2
    assert str(exceeded) == "usage limit max_model_calls=3 reached (3 used)"
    assert result["plan"] and result["files"] == {
        "calc/add.py": "def add(a, b):\n    return a + b\n"
    }
    saved = await store.get_results("t")
    assert [r.agent for r in saved or []] == ["planner", "coder", "reviewer"]
    thread = await store.get_thread("t")
    assert thread is not None and "files" in thread.full_state()


async def test_network_defaults_apply_and_a_run_replaces_them(quiet_logs: None) -> None:
    network = build_network()
    network.limits = UsageLimits(max_model_calls=1)
    assert (await network.run(TASK)).stop_reason == StopReason.USAGE_LIMIT
    result = await network.run(TASK, limits=UsageLimits(max_model_calls=100))
    assert result.stop_reason == StopReason.ROUTER_FINISHED
    assert result.limit_exceeded is None
    assert Network(
        "n", agents=network.agents.values(), router=network.router, limits=UsageLimits()
    ).limits


async def test_max_tool_calls_counts_every_call_of_an_answer(quiet_logs: None) -> None:
    network = build(Recorder().telemetry)
    result = await network.run(
        "Go.", state={"temp:token": SECRET}, limits=UsageLimits(max_tool_calls=2)
    )
    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert len(result.results) == 1  # its three parallel calls all ran; no second request
    assert result.limit_exceeded.limit == "max_tool_calls"
    assert result.limit_exceeded.actual == 3


async def test_token_limits(quiet_logs: None) -> None:
    network = build_network()
    result = await network.run(TASK, limits=UsageLimits(max_output_tokens=20))
    assert result.stop_reason == StopReason.USAGE_LIMIT
    figures = result.limit_exceeded.figures
    assert figures.output_tokens == result.usage.completion_tokens >= 20
    assert result.limit_exceeded.limit == "max_output_tokens"
    assert len(result.results) == 2  # 17 tokens after the planner, 25 after the coder
    unlimited_input = await network.run(TASK, limits=UsageLimits(max_input_tokens=1))
    assert unlimited_input.stop_reason == StopReason.ROUTER_FINISHED  # scripted: 0 input tokens


async def test_a_routing_agent_checks_before_its_own_requests(quiet_logs: None) -> None:
    router_model = ScriptedModel(
        [call("select_agent", name="writer", reason="go"), call("done", summary="ok")]
    )
    writer = Agent("writer", model=ScriptedModel(["Written."]))
    network = Network("routed", agents=[writer], router=routing_agent(router_model))
    result = await network.run("Write.", limits=UsageLimits(max_model_calls=2))
    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert len(router_model.requests) == 1  # the second routing request was never sent
    assert result.limit_exceeded.figures.model_calls == 2
    assert [r.agent for r in result.results] == ["writer"]


async def test_the_trace_says_which_limit(quiet_logs: None) -> None:
    recorder = Recorder()
    network = build_network()
    network.telemetry = recorder.telemetry
    await network.run(TASK, limits=UsageLimits(max_model_calls=2))
    root = recorder.only("invoke_workflow codegen")
    assert root.attributes["agent_network.stop_reason"] == "usage_limit"
    assert root.attributes["agent_network.usage_limit"] == "max_model_calls"
    assert root.attributes["agent_network.usage_limit.value"] == 2
    assert root.attributes["agent_network.usage_limit.actual"] == 2


async def test_cost_comes_from_litellms_price_map(
    openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}
    for _ in range(3):
        openai_server.add_tool_calls(FakeToolCall("again", {}), usage=usage)
    model = LiteLLMModel("openai/gpt-4o-mini", api_base=openai_server.base_url, api_key="x")
    agent = Agent("spender", tools=[again], model=model)
    network = Network("costly", agents=[agent], router=lambda ctx: agent)
    result = await network.run("Spend.", limits=UsageLimits(max_cost_usd=0.0005))
    assert result.stop_reason == StopReason.USAGE_LIMIT
    per_call = result.results[0].model_calls[0].cost_usd
    # gpt-4o-mini in litellm's offline map: $0.15 / M input, $0.60 / M output tokens.
    assert per_call == pytest.approx(1000 * 0.15e-6 + 500 * 0.6e-6)
    calls = len(result.results)
    assert calls == 2  # 0.00045 after one request: below; 0.0009 after two: reached
    assert result.limit_exceeded.figures.cost_usd == pytest.approx(calls * per_call)
    assert result.limit_exceeded.figures.unpriced == 0


async def test_a_model_without_a_price_is_counted_as_unpriced(
    openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    for _ in range(2):
        openai_server.add_tool_calls(FakeToolCall("again", {}))
    model = LiteLLMModel("openai/no-such-model", api_base=openai_server.base_url, api_key="x")
    agent = Agent("a", tools=[again], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent)
    with pytest.warns(UnpricedModelWarning, match="'openai/no-such-model' has no known price"):
        result = await network.run("Hi.", limits=UsageLimits(max_cost_usd=1e-9, max_model_calls=2))
    assert result.results[0].model_calls[0].cost_usd is None
    exceeded = result.limit_exceeded
    assert exceeded is not None and exceeded.limit == "max_model_calls"  # cost never counted
    assert (exceeded.figures.cost_usd, exceeded.figures.unpriced) == (0.0, 2)


async def test_a_cost_capped_run_of_one_request_warns_inside_the_run(quiet_logs: None) -> None:
    """docs/telemetry.md: a cost-capped run warns once per unpriced model. Its last answer is
    counted as the run ends, not on the first read of `result.spent` (which would warn
    outside the run, or never when nobody reads it)."""
    network = Network("n", agents=[Agent("a", model=ScriptedModel(lambda request: "Hi."))])
    with pytest.warns(UnpricedModelWarning, match="'scripted' has no known price"):
        result = await network.run("Hi.", limits=UsageLimits(max_cost_usd=0.01))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnpricedModelWarning)
        assert (result.spent.model_calls, result.spent.unpriced) == (1, 1)  # counted once
        with pytest.raises(UnpricedModelWarning) as raised:  # made an error: the run fails
            await network.run("Hi.", limits=UsageLimits(max_cost_usd=0.01))
    partial = raised.value.partial_result  # type: ignore[attr-defined]
    assert partial.stop_reason == StopReason.ERROR and partial.output == "Hi."


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="max_model_calls must be an int >= 0, got -1"):
        UsageLimits(max_model_calls=-1)
    with pytest.raises(ConfigurationError, match="max_tool_calls must be an int >= 0, got 1.5"):
        UsageLimits(max_tool_calls=1.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="max_cost_usd must be a finite number >= 0"):
        UsageLimits(max_cost_usd="0.5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="max_tokens"):
        UsageLimits(max_tokens=3)  # type: ignore[call-arg]
    assert UsageLimits(max_cost_usd=1) == UsageLimits(max_cost_usd=1)
    network = build_network()
    with pytest.raises(ConfigurationError, match="limits must be UsageLimits"):
        Network(
            "n",
            agents=list(network.agents.values()),
            router=network.router,
            limits={"max_model_calls": 1},  # type: ignore[arg-type]
        )


async def test_a_retried_attempt_counts_as_a_request(
    openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    openai_server.add_error(500, "overloaded")
    openai_server.add_tool_calls(FakeToolCall("again", {}))
    model = LiteLLMModel(
        "openai/gpt-4o-mini", api_base=openai_server.base_url, api_key="x", retry_delay=0
    )
    agent = Agent("a", tools=[again], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent)
    result = await network.run("Go.", limits=UsageLimits(max_model_calls=2))
    assert [call.error for call in result.results[0].model_calls] == [
        "500",
        None,
    ]  # the HTTP status
    assert len(result.results) == 1
    assert result.limit_exceeded is not None
    assert result.limit_exceeded.figures.model_calls == 2


def test_a_check_counts_what_is_not_recorded_yet_in_that_check_only() -> None:
    """`Unrecorded`: requests spent, requests pending and tool calls running count in one
    check; added up level by level (a branch's, then its sub-run's), in that order."""
    ctx: RunContext[None] = RunContext(network=None, state=State(), input="", run_id="r")  # type: ignore[arg-type]
    spent = ModelCall("m", usage=Usage(prompt_tokens=7), cost_usd=0.25)
    below = ModelCall("m", usage=Usage(prompt_tokens=5), cost_usd=None)
    both = Unrecorded((spent,), pending=1, tools=2) + Unrecorded((below,), tools=1)
    assert both == Unrecorded((spent, below), pending=1, tools=3)

    budget = Budget(UsageLimits(max_model_calls=4, max_tool_calls=4))
    assert budget.check(ctx, NOTHING_UNRECORDED) is None
    assert budget.check(ctx, both) is None  # 3 requests (2 spent, 1 pending), 3 tool calls
    assert budget.figures.model_calls == 0  # counted in that check only
    exceeded = budget.check(ctx, both + Unrecorded(pending=1))
    assert exceeded is not None and (exceeded.limit, exceeded.actual) == ("max_model_calls", 4)
    assert (exceeded.figures.input_tokens, exceeded.figures.unpriced) == (12, 1)
    exceeded = budget.check(ctx, both + Unrecorded(tools=1))
    assert exceeded is not None and (exceeded.limit, exceeded.actual) == ("max_tool_calls", 4)


async def test_a_typed_answers_re_ask_is_counted_in_a_run_that_records_no_requests() -> None:
    """A run with no limits, traces or budget records no requests: its call was counted as
    one request from its answer, so a typed answer asked again said 1 where 2 were sent.
    Each answer the call kept (`InferenceResult.answers`) is a request."""
    from pydantic import BaseModel

    class City(BaseModel):
        name: str

    model = ScriptedModel(["not json", '{"name": "Paris"}'])
    result = await Network("n", agents=[Agent("geo", model=model, output_type=City)]).run("x")
    assert result.results[-1].model_calls == ()  # nothing recorded: counted from its answers
    assert (result.spent.model_calls, result.spent.unpriced) == (2, 2)
    assert result.spent.output_tokens == result.usage.completion_tokens  # both answers'
    plain = await Network("n", agents=[Agent("a", model=ScriptedModel(["Hi."]))]).run("x")
    assert (plain.spent.model_calls, plain.spent.unpriced) == (1, 1)


@pytest.mark.parametrize("cost", [float("nan"), float("inf"), -5.0])
async def test_a_custom_models_bad_cost_is_unpriced_not_a_way_past_the_cap(
    cost: float, quiet_logs: None
) -> None:
    """A cost that is no price (a custom `Model`'s NaN, infinity or negative) counted as
    given: NaN made every comparison with `max_cost_usd` false and a negative cost gave
    back what earlier requests spent, so the run went on to `max_iter` past its cap (and a
    carried `usage=` kept the NaN for every later run). Now it is an unpriced request."""
    answer = ModelResponse(AssistantMessage(None, [ToolCall("c", "again", {})]), cost_usd=cost)
    priced = ModelResponse(AssistantMessage(None, [ToolCall("c", "again", {})]), cost_usd=0.6)
    bad = Agent("bad", tools=[again], model=ScriptedModel([answer], repeat_last=True))
    good = Agent("good", tools=[again], model=ScriptedModel([priced], repeat_last=True))
    turns = iter([good, bad, bad, good, good, good])
    network = Network("n", agents=[bad, good], router=lambda ctx: next(turns))
    carried = UsageFigures()
    with pytest.warns(UnpricedModelWarning, match="'scripted' has no known price"):
        result = await network.run("Go.", limits=UsageLimits(max_cost_usd=1.0), usage=carried)
    assert result.stop_reason == StopReason.USAGE_LIMIT  # after the two priced requests
    assert [r.agent for r in result.results] == ["good", "bad", "bad", "good"]
    assert (result.spent.cost_usd, result.spent.unpriced) == (1.2, 2)
    assert carried.cost_usd == 1.2


@pytest.mark.parametrize(
    ("usage", "field", "shown"),
    [
        (Usage(prompt_tokens=-1000), "prompt_tokens", "-1000"),
        (Usage(completion_tokens=10**30), "completion_tokens", str(10**30)),
        (Usage(5, 5, 10, cached_tokens=-1), "cached_tokens", "-1"),
        (Usage(5, 5, -10), "total_tokens", "-10"),
    ],
)
@pytest.mark.parametrize("asker", ["agent", "router"])
async def test_a_custom_models_token_count_that_is_no_count_is_a_model_error(
    usage: Usage, field: str, shown: str, asker: str
) -> None:
    """A negative or absurd count was read three ways: kept as given in `result.usage` (and
    by an agent's caller, a trace), taken within 0 to 2**53 - 1 by the usage limits, and as
    what was reserved by a shared budget; a run reported -1000 prompt tokens while its
    limits counted 0. Now the answer is refused where the agent (or routing agent) receives
    it, naming the model, the asker and the field, so no figure ever holds it."""
    bad = ModelResponse(AssistantMessage(None, [ToolCall("c", "again", {})]), usage=usage)
    if asker == "router":
        bad = ModelResponse(
            AssistantMessage(None, [ToolCall("c", "select_agent", {"name": "a"})]), usage=usage
        )
    agent = Agent("a", tools=[again], model=ScriptedModel(["done"] if asker == "router" else [bad]))
    router = routing_agent(ScriptedModel([bad]), name="picker") if asker == "router" else None
    network = Network("n", agents=[agent], router=router or (lambda ctx: agent), max_iter=5)
    named = "picker" if asker == "router" else "a"
    with pytest.raises(
        ModelError,
        match=rf"model 'scripted' of agent '{named}' answered a usage whose {field} is "
        rf"{shown}, not a token count from 0 to 2\*\*5",
    ) as raised:
        await network.run("Go.", limits=UsageLimits(max_input_tokens=10))
    partial = raised.value.partial_result
    assert partial is not None and partial.results == [] and partial.usage == Usage()
    assert partial.spent.input_tokens == 0
