"""`sequence(...)`: agents in order, once each, then the run finishes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import (
    ConfigurationError,
    Network,
    Parallel,
    RoutingError,
    RunContext,
    StopReason,
    ThreadRef,
)
from routers import network_mermaid, sequence
from tests.routers.helpers import scripted_agent


@pytest.mark.anyio
async def test_runs_agents_in_order_then_finishes() -> None:
    planner, coder, reviewer = (scripted_agent(n) for n in ("planner", "coder", "reviewer"))
    network = Network(
        "team", agents=[planner, coder, reviewer], router=sequence(planner, "coder", reviewer)
    )

    result = await network.run("build it")

    assert [r.agent for r in result.results] == ["planner", "coder", "reviewer"]
    assert result.stop_reason == StopReason.ROUTER_FINISHED
    assert result.output == "reviewer done"


@pytest.mark.anyio
async def test_each_run_starts_from_the_first_agent() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    network = Network("pair", agents=[a, b], router=sequence(a, b))

    first = await network.run("one")
    second = await network.run("two")

    assert [r.agent for r in first.results] == [r.agent for r in second.results] == ["a", "b"]


def test_an_unknown_agent_fails_when_the_network_is_built() -> None:
    with pytest.raises(RoutingError, match="ghost"):
        Network("team", agents=[scripted_agent("a")], router=sequence("a", "ghost"))


def test_needs_an_agent() -> None:
    with pytest.raises(Exception, match="at least one agent"):
        sequence()


@pytest.mark.parametrize("entry", [None, 3, object(), ""])
def test_an_entry_that_is_no_agent_is_refused_naming_it(entry: Any) -> None:
    # was an AttributeError ('NoneType' object has no attribute 'name'), or for "" a
    # RoutingError only when the network was built
    with pytest.raises(ConfigurationError, match=r"sequence\(\): entry 1 "):
        sequence("a", entry)


@pytest.mark.anyio
async def test_each_agent_gets_one_call_and_a_fan_out_runs_its_tool_loop() -> None:
    """ADK's SequentialAgent runs each sub-agent until it answers (docs/coming-from-adk.md):
    here an agent's place is one call, so its tool's result is never read by it; a one-branch
    `Parallel` place runs its tool loop to its answer before the next agent."""

    @tool
    def look_up() -> str:
        """Look the tide up."""
        return "high tide at 6"

    def researcher() -> Agent:
        model = ScriptedModel([call("look_up"), "Tides: high at 6"])
        return Agent("researcher", tools=[look_up], model=model, output_key="research")

    def writer() -> Agent:
        return Agent("writer", model=ScriptedModel(["draft"]), system="From: {research?}")

    one, two = researcher(), writer()
    plain = await Network("n", agents=[one, two], router=sequence(one, two)).run("tides")
    assert [r.agent for r in plain.results] == ["researcher", "writer"]
    assert "research" not in plain  # the researcher never read its tool's result
    one, two = researcher(), writer()
    looped = await Network("n", agents=[one, two], router=sequence(Parallel(one), two)).run("x")
    assert [r.agent for r in looped.results] == ["researcher", "researcher", "writer"]
    assert two.model.requests[0].system[0].content == "From: Tides: high at 6"


def test_draws_a_chain() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    drawing = network_mermaid(Network("pair", agents=[a, b], router=sequence(a, b)))

    assert drawing.splitlines()[0] == "flowchart TD"
    assert "    START --> a" in drawing
    assert "    a --> b" in drawing
    assert "    b --> END" in drawing


def test_a_repeated_agent_numbers_the_steps() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    drawing = sequence(a, b, a).to_mermaid()

    assert '    a -->|"2"| b' in drawing
    assert '    b -->|"3"| a' in drawing
    assert '    a -->|"4"| END' in drawing


@pytest.mark.anyio
async def test_the_position_is_not_kept_in_ctx_extras() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    route = sequence(a, b)
    extras_seen: list[dict[str, Any]] = []

    def watched(ctx: RunContext) -> Any:
        choice = route(ctx)
        extras_seen.append(dict(ctx.extras))
        return choice

    result = await Network("pair", agents=[a, b], router=watched).run("go")

    assert [r.agent for r in result.results] == ["a", "b"]
    assert extras_seen == [{}, {}, {}]  # ctx.extras is left to user code


@pytest.mark.anyio
async def test_one_router_serves_concurrent_runs() -> None:
    agents = [scripted_agent(n) for n in ("a", "b", "c")]
    network = Network("chain", agents=agents, router=sequence(*agents))
    orders: list[list[str]] = []

    async def one(task: str) -> None:
        result = await network.run(task)
        orders.append([r.agent for r in result.results])

    async with anyio.create_task_group() as group:
        for i in range(20):
            group.start_soon(one, f"task {i}")

    assert orders == [["a", "b", "c"]] * 20


@pytest.mark.anyio
async def test_a_threads_next_run_starts_from_the_first_agent(tmp_path: Path) -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    network = Network("pair", agents=[a, b], router=sequence(a, b))
    store = tmp_path / "threads.db"

    first = await network.run("one", thread=ThreadRef("t1", store=store))
    second = await network.run("two", thread=ThreadRef("t1", store=store))

    assert [r.agent for r in first.results] == ["a", "b"]
    assert [r.agent for r in second.results][-2:] == ["a", "b"]  # its own calls, after the thread's
    assert len(second.results) == 4


@tool(requires_confirmation=True)
def deploy(target: str, ctx: ToolContext) -> str:
    """Deploy the build."""
    ctx.kv.set("deployed", target)
    return f"deployed to {target}"


@pytest.mark.anyio
async def test_a_resumed_run_goes_on_after_the_interrupted_agent() -> None:
    builder = scripted_agent("builder")
    deployer = scripted_agent("deployer", call("deploy", target="prod"), "deployed", tools=[deploy])
    reviewer = scripted_agent("reviewer")
    network = Network(
        "release",
        agents=[builder, deployer, reviewer],
        router=sequence(builder, deployer, reviewer),
    )

    stopped = await network.run("ship it")
    assert stopped.stop_reason == StopReason.INTERRUPTED
    assert [r.agent for r in stopped.results] == ["builder", "deployer"]

    resumed = await network.run(stopped.resume([stopped.interrupts[0].accept()]))

    # the deployer's held call is finished, then the sequence goes on: never back to the builder
    assert [r.agent for r in resumed.results] == ["deployer", "reviewer"]
    assert resumed.stop_reason == StopReason.ROUTER_FINISHED
    assert resumed.state.kv.get("deployed") == "prod"


@pytest.mark.anyio
async def test_a_fan_out_is_one_place_in_the_sequence() -> None:
    a, b, c, d = (scripted_agent(n) for n in "abcd")
    fan_out = Parallel(b, c)
    network = Network("fan", agents=[a, b, c, d], router=sequence(a, fan_out, d))

    result = await network.run("go")

    # the fan-out's two calls move the sequence on by one place: d still runs
    assert [r.agent for r in result.results] == ["a", "b", "c", "d"]
    assert result.stop_reason == StopReason.ROUTER_FINISHED


@pytest.mark.anyio
async def test_fan_outs_of_any_width_back_to_back() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    wide = Parallel.map(b, ["x", "y", "z"], name="wide")
    network = Network("fans", agents=[a, b], router=sequence(wide, wide, a))

    result = await network.run("go")

    # the same fan-out twice in a row is two places (its branches start over), then a
    assert [r.agent for r in result.results] == ["b"] * 6 + ["a"]


@pytest.mark.anyio
async def test_a_fan_out_whose_branches_run_tool_loops_is_still_one_place() -> None:
    @tool
    def look() -> str:
        """Look something up."""
        return "seen"

    def script(request: Any) -> Any:
        return "found" if request.history[-1].role == "tool" else call("look")

    a, d = scripted_agent("a"), scripted_agent("d")
    b = Agent("b", tools=[look], model=ScriptedModel(script))
    network = Network("fan", agents=[a, b, d], router=sequence(a, Parallel.map(b, ["x", "y"]), d))

    result = await network.run("go")

    # each branch made two calls (its tool call, its answer): still one place, d runs once
    assert [r.agent for r in result.results] == ["a", "b", "b", "b", "b", "d"]
    assert result.stop_reason == StopReason.ROUTER_FINISHED


def test_a_fan_out_is_drawn_as_its_branches_side_by_side() -> None:
    a, b, c, d = (scripted_agent(n) for n in "abcd")
    team = Network("team", agents=[c])
    route = sequence(a, Parallel(b, team, name="fan"), d)
    assert route.to_mermaid().splitlines() == [
        "flowchart TD",
        '    START(["START"])',
        '    a["a"]',
        '    subgraph fan["fan"]',
        '        fan_b["b"]',
        '        fan_team["network: team"]',
        "    end",
        '    d["d"]',
        '    END(["END"])',
        "    START --> a",
        "    a --> fan_b",
        "    a --> fan_team",
        "    fan_b --> d",
        "    fan_team --> d",
        "    d --> END",
    ]
