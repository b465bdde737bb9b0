"""Agents: instructions from state, models, tool_choice, output_key, hooks, standalone runs."""

import dataclasses

import pytest

from agents import Agent, AgentHooks, ScriptedModel, call, tool
from network import ConfigurationError, Network, StopReason, TemplateError


def one_call(agent: Agent, **kwargs) -> Network:
    return Network(
        "n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None, **kwargs
    )


def system_text(model: ScriptedModel, index: int = 0) -> str:
    return model.requests[index].system[0].content


@pytest.mark.anyio
async def test_instructions_are_filled_from_state_with_escapes_and_optional_keys() -> None:
    model = ScriptedModel(["ok"])
    agent = Agent(
        "a",
        system='Hi {user:name}. Plan: {plan}. Notes: {notes?}. JSON: {{"k": 1}} and {"raw": 2}',
        model=model,
    )
    await one_call(agent).run("x", state={"user:name": "Ada", "plan": "ship it"})
    assert system_text(model) == 'Hi Ada. Plan: ship it. Notes: . JSON: {"k": 1} and {"raw": 2}'


@pytest.mark.anyio
async def test_a_missing_placeholder_names_the_key_and_the_agent() -> None:
    agent = Agent("planner", system="Plan: {plan}", model=ScriptedModel(["ok"]))
    with pytest.raises(TemplateError) as caught:
        await one_call(agent).run("x")
    assert caught.value.key == "plan"
    assert caught.value.agent == "planner"
    assert "'plan'" in str(caught.value) and "'planner'" in str(caught.value)


@pytest.mark.anyio
async def test_instructions_may_be_a_sync_or_async_function_of_the_run() -> None:
    sync_model, async_model = ScriptedModel(["1"]), ScriptedModel(["2"])

    async def later(ctx):
        return f"async for {ctx.input}"

    first = Agent("s", system=lambda ctx: f"sync {ctx.call_count}", model=sync_model)
    second = Agent("t", system=later, model=async_model)
    network = Network(
        "n",
        agents=[first, second],
        router=lambda ctx: [first, second] if ctx.call_count == 0 else None,
    )
    await network.run("topic")
    assert system_text(sync_model) == "sync 0"
    assert system_text(async_model) == "async for topic"


@pytest.mark.anyio
async def test_agents_fall_back_to_the_network_default_model() -> None:
    shared = ScriptedModel(["from default"])
    agent = Agent("a")
    result = await one_call(agent, default_model=shared).run("x")
    assert result.output == "from default"
    with pytest.raises(ConfigurationError, match="no model"):
        await one_call(Agent("b")).run("x")


@pytest.mark.anyio
async def test_tool_choice_is_sent_and_validated() -> None:
    @tool
    def lookup(q: str) -> str:
        return q

    model = ScriptedModel(["fine"])
    agent = Agent("a", tools=[lookup], tool_choice="lookup", model=model)
    await one_call(agent).run("x")
    assert model.requests[0].tool_choice == "lookup"
    assert model.requests[0].tool_names == ["lookup"]
    for choice in ("auto", "required", "none"):
        Agent("ok", tools=[lookup], tool_choice=choice)
    with pytest.raises(ConfigurationError, match="nope"):
        Agent("bad", tools=[lookup], tool_choice="nope")


@pytest.mark.anyio
async def test_output_key_stores_the_final_text() -> None:
    agent = Agent("writer", model=ScriptedModel(["the plan"]), output_key="plan")
    result = await one_call(agent).run("x")
    assert result["plan"] == "the plan"
    assert result.results[0].state_delta == [{"op": "add", "path": "/plan", "value": "the plan"}]


@pytest.mark.anyio
async def test_on_start_can_rewrite_the_prompt_and_history() -> None:
    from network import SystemMessage

    def on_start(call):
        call.prompt = [SystemMessage(content="rewritten")]
        call.history = list(call.history)[-1:]

    model = ScriptedModel(["ok"])
    agent = Agent("a", system="original", model=model, hooks={"on_start": on_start})
    await one_call(agent).run("question")
    request = model.requests[0]
    assert [m.content for m in request.system] == ["rewritten"]
    assert [m.content for m in request.history] == ["question"]


@pytest.mark.anyio
async def test_on_start_can_skip_the_call() -> None:
    model = ScriptedModel([])
    agent = Agent(
        "a", model=model, hooks=AgentHooks(on_start=lambda call: setattr(call, "skip", True))
    )
    result = await one_call(agent).run("x")
    assert model.requests == []
    assert result.results[0].skipped
    assert len(result.messages) == 1  # only the user's input


@pytest.mark.anyio
async def test_on_response_runs_before_tools_and_can_drop_tool_calls() -> None:
    ran = []

    @tool
    def dangerous() -> str:
        ran.append(True)
        return "boom"

    async def on_response(call):
        assert call.response.message.tool_calls[0].name == "dangerous"
        call.response.message.tool_calls = []
        call.response.message.content = "I will not."

    agent = Agent(
        "a",
        tools=[dangerous],
        model=ScriptedModel([call("dangerous")]),
        hooks={"on_response": on_response},
    )
    result = await one_call(agent).run("x")
    assert ran == []
    assert result.output == "I will not."


@pytest.mark.anyio
async def test_on_finish_decides_what_history_keeps() -> None:
    from network import AssistantMessage

    def on_finish(call):
        return dataclasses.replace(
            call.result, output=[AssistantMessage(content="redacted", name="a")]
        )

    agent = Agent("a", model=ScriptedModel(["secret"]), hooks={"on_finish": on_finish})
    result = await one_call(agent).run("x")
    assert result.output == "redacted"
    assert result.messages[-1].content == "redacted"


@pytest.mark.anyio
async def test_standalone_run_loops_until_text_with_tool_results_in_the_next_request() -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    model = ScriptedModel([call("add", a=2, b=3), "The sum is 5."])
    agent = Agent("calc", tools=[add], model=model)
    result = await agent.run("2+3?", max_steps=5)
    assert result.output == "The sum is 5."
    second = model.requests[1].history
    assert [m.role for m in second] == ["user", "assistant", "tool"]
    assert second[-1].content == "5"
    assert second[-1].tool_call_id == second[-2].tool_calls[0].id


@pytest.mark.anyio
async def test_standalone_run_stops_at_max_steps() -> None:
    @tool
    def again() -> str:
        return "more"

    agent = Agent("loop", tools=[again], model=ScriptedModel([call("again")], repeat_last=True))
    result = await agent.run("x", max_steps=3)
    assert result.stop_reason == StopReason.MAX_ITER
    assert len(result.results) == 3
