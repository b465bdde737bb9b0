"""`routing_agent(...)`: an LLM choosing through `select_agent` / `done`, on ScriptedModel."""

from __future__ import annotations

from typing import Any

import pytest

from agents import ScriptedModel, call
from network import (
    AssistantMessage,
    ConfigurationError,
    Network,
    RoutingError,
    RunContext,
    StopReason,
    ToolMessage,
    Usage,
)
from routers import RoutingAgent, routing_agent
from tests.routers.helpers import scripted_agent


def team(router: Any, **kwargs: Any) -> Network:
    planner = scripted_agent("planner", "the plan", description="Breaks the task into steps.")
    coder = scripted_agent("coder", "the code", description="Writes the code.")
    return Network("team", agents=[planner, coder], router=router, **kwargs)


@pytest.mark.anyio
async def test_picks_agents_until_done() -> None:
    model = ScriptedModel(
        [
            call("select_agent", name="planner", reason="plan first"),
            call("select_agent", name="coder", reason="now code"),
            call("done", summary="planned and coded"),
        ]
    )
    result = await team(routing_agent(model)).run("build a CLI")

    assert [r.agent for r in result.results] == ["planner", "coder"]
    assert result.stop_reason == StopReason.ROUTER_DONE
    assert result.summary == "planned and coded"
    assert result.output == "the code"
    assert model.remaining == 0


@pytest.mark.anyio
async def test_its_own_calls_stay_out_of_the_history() -> None:
    model = ScriptedModel(
        [call("select_agent", name="planner", reason="go"), call("done", summary="ok")]
    )
    result = await team(routing_agent(model)).run("build a CLI")

    assert [r.agent for r in result.results] == ["planner"]
    assert [m.role for m in result.messages] == ["user", "assistant"]
    assert result.messages[-1].content == "the plan"
    for message in result.messages:
        assert not getattr(message, "tool_calls", None)


@pytest.mark.anyio
async def test_the_request_requires_a_tool_and_describes_the_team() -> None:
    model = ScriptedModel(
        [call("select_agent", name="planner", reason="go"), call("done", summary="ok")]
    )
    await team(routing_agent(model)).run("build a CLI")

    first, second = model.requests
    assert first.tool_choice == "required"
    assert first.tool_names == ["select_agent", "done"]
    select = first.tools[0]["function"]["parameters"]
    assert select["properties"]["name"]["enum"] == ["planner", "coder"]
    assert "name" in select["required"]
    system = first.system[0].content
    assert "planner: Breaks the task into steps." in system
    assert "coder: Writes the code." in system
    assert "build a CLI" in system
    assert [m.role for m in first.history] == ["user"]
    # The second choice sees what the planner said.
    assert "planner: the plan" in second.system[0].content


@pytest.mark.anyio
async def test_an_unknown_name_goes_back_to_the_model_to_correct() -> None:
    model = ScriptedModel(
        [
            call("select_agent", name="tester", reason="test it"),
            call("select_agent", name="coder", reason="sorry, the coder"),
            call("done", summary="ok"),
        ]
    )
    result = await team(routing_agent(model)).run("build a CLI")

    assert [r.agent for r in result.results] == ["coder"]
    assert len(model.requests) == 3
    retry = model.requests[1]
    assert [m.role for m in retry.history] == ["user", "assistant", "tool"]
    asked, answer = retry.history[1], retry.history[2]
    assert isinstance(asked, AssistantMessage)
    assert asked.tool_calls[0].arguments["name"] == "tester"
    assert isinstance(answer, ToolMessage)
    assert answer.is_error
    assert answer.tool_call_id == asked.tool_calls[0].id
    assert "'tester'" in answer.content
    assert "planner, coder" in answer.content
    # The correction is the router's business: the next choice starts afresh.
    assert [m.role for m in model.requests[2].history] == ["user"]


@pytest.mark.anyio
async def test_too_many_bad_names_raise_routing_error_with_the_partial_result() -> None:
    model = ScriptedModel(
        [
            call("select_agent", name="planner", reason="go"),
            call("select_agent", name="tester", reason="test"),
            call("select_agent", name="qa", reason="qa then"),
        ]
    )
    network = team(routing_agent(model, max_corrections=1))

    with pytest.raises(RoutingError) as raised:
        await network.run("build a CLI")

    error = raised.value
    assert error.agent == "qa"
    assert "'qa'" in str(error)
    assert "'tester'" in str(error)
    assert error.partial_result is not None
    assert error.partial_result.stop_reason == StopReason.ERROR
    assert [r.agent for r in error.partial_result.results] == ["planner"]


@pytest.mark.anyio
async def test_no_corrections_allowed_fails_on_the_first_bad_name() -> None:
    model = ScriptedModel([call("select_agent", name="tester")])

    with pytest.raises(RoutingError, match="tester"):
        await team(routing_agent(model, max_corrections=0)).run("x")
    assert len(model.requests) == 1


@pytest.mark.anyio
async def test_invalid_arguments_and_unknown_tools_are_corrected_too() -> None:
    model = ScriptedModel(
        [
            call("select_agent", reason="forgot the name"),
            call("handoff", to="coder"),
            call("select_agent", name="coder"),
            call("done", summary="ok"),
        ]
    )
    result = await team(routing_agent(model, max_corrections=2)).run("x")

    assert [r.agent for r in result.results] == ["coder"]
    assert "name" in model.requests[1].history[-1].content
    assert "handoff" in model.requests[2].history[-1].content


@pytest.mark.anyio
async def test_a_name_in_another_case_is_accepted() -> None:
    model = ScriptedModel([call("select_agent", name="Coder"), call("done", summary="ok")])
    result = await team(routing_agent(model)).run("x")

    assert [r.agent for r in result.results] == ["coder"]
    assert len(model.requests) == 2


@pytest.mark.anyio
async def test_a_text_reply_ends_the_run_saying_so() -> None:
    model = ScriptedModel([call("select_agent", name="planner"), "I think we are finished."])
    result = await team(routing_agent(model)).run("x")

    assert result.stop_reason == StopReason.ROUTER_TEXT
    assert result.summary == "I think we are finished."
    assert [r.agent for r in result.results] == ["planner"]


@pytest.mark.anyio
async def test_done_before_any_agent_makes_the_summary_the_output() -> None:
    model = ScriptedModel([call("done", summary="nothing to do")])
    result = await team(routing_agent(model)).run("x")

    assert result.stop_reason == StopReason.ROUTER_DONE
    assert result.results == []
    assert result.output == "nothing to do"


@pytest.mark.anyio
async def test_uses_the_network_default_model_and_records_its_usage() -> None:
    model = ScriptedModel([call("select_agent", name="planner"), call("done", summary="ok")])
    router = routing_agent(system="Prefer the planner.")
    usage: list[Usage] = []

    async def watching(ctx: RunContext) -> Any:
        choice = await router(ctx)
        usage.append(ctx.engine.router_usage)
        return choice

    watching.validate = router.validate  # type: ignore[attr-defined]
    result = await team(watching, default_model=model).run("x")

    assert [r.agent for r in result.results] == ["planner"]
    assert model.requests[0].system[0].content.startswith("Prefer the planner.")
    assert usage[0].total_tokens > 0
    assert usage[1].total_tokens == 2 * usage[0].total_tokens


@pytest.mark.anyio
async def test_a_system_function_writes_the_instructions() -> None:
    model = ScriptedModel([call("done", summary="ok")])

    async def instructions(ctx: RunContext) -> str:
        return f"Route for {ctx.network.name}."

    await team(routing_agent(model, system=instructions)).run("x")

    assert model.requests[0].system[0].content.startswith("Route for team.")


@pytest.mark.anyio
async def test_does_not_ask_the_model_while_agents_are_queued() -> None:
    model = ScriptedModel([])
    router = routing_agent(model)
    network = team(router)
    ctx = RunContext(network=network, state=network.new_state(), input="x", run_id="run_1")
    ctx.stack.append(network.agents["coder"])

    assert await router(ctx) is None
    assert model.requests == []


def test_without_any_model_the_network_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="no model"):
        team(routing_agent())


def test_rejects_a_negative_correction_budget() -> None:
    with pytest.raises(ConfigurationError, match="max_corrections"):
        routing_agent(ScriptedModel([]), max_corrections=-1)


@pytest.mark.parametrize(
    ("options", "field"),
    [({"params": 5}, "params"), ({"params": [("t", 1)]}, "params"), ({"name": None}, "name")],
)
def test_rejects_bad_options_naming_them(options: dict[str, Any], field: str) -> None:
    # params=5 was a TypeError ('int' object is not iterable); name=None was taken
    with pytest.raises(ConfigurationError, match=field):
        routing_agent(ScriptedModel([]), **options)


def test_is_a_routing_agent() -> None:
    router = routing_agent("openai/gpt-4o-mini", name="boss")
    assert isinstance(router, RoutingAgent)
    assert router.name == "boss"


@pytest.mark.anyio
async def test_routing_usage_counts_in_the_run_totals() -> None:
    from agents import Agent, ScriptedModel, call
    from network import Network
    from routers import routing_agent

    worker = Agent("worker", model=ScriptedModel(["done"]))
    router_model = ScriptedModel(
        [call("select_agent", name="worker", reason="go"), call("done", summary="ok")]
    )
    result = await Network("n", agents=[worker], router=routing_agent(router_model)).run("x")
    agent_tokens = sum(r.usage.total_tokens for r in result.results)
    assert result.usage.total_tokens > agent_tokens > 0
