"""Sub-runs (`network.run.subrun`): spending reported to the caller, limits held across a
hierarchy, and what nests, two levels deep.

The hierarchy: a director whose tool is a manager network, whose agent's tools are the
researcher (an agent as a tool) and the billing network (a confirmation inside).
"""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call
from network import Network, StopReason, UsageLimits
from tests.agents.capabilities.subagents.subagents import (
    REFUNDS,
    billing_network,
    billing_script,
    researcher,
    researcher_script,
    supervised,
    supervisor_script,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _clean() -> None:
    REFUNDS.clear()


def manager_script(request: Any) -> Any:
    last = request.history[-1]
    if last.role == "user":
        return call("researcher", input="order 7")
    if str(last.content).startswith("Research says"):
        return call("billing", input="refund order 7")
    return f"Manager: {last.content}"


def director() -> tuple[Network, dict[str, ScriptedModel]]:
    models = {
        "director": ScriptedModel(supervisor_script("management", "sort out order 7")),
        "manager": ScriptedModel(manager_script),
        "researcher": ScriptedModel(researcher_script),
        "billing": ScriptedModel(billing_script),
    }
    manager = Agent(
        "manager",
        tools=[
            researcher(models["researcher"]).as_tool(),
            billing_network(models["billing"]).as_tool(),
        ],
        model=models["manager"],
    )

    def again(ctx: Any) -> Any:
        last = ctx.last_result
        return manager if last is None or last.tool_calls else None

    management = Network("management", agents=[manager], router=again)
    return supervised([management.as_tool()], models["director"]), models


async def test_two_levels_deep_an_approval_surfaces_at_the_top_and_resumes_once() -> None:
    network, _ = director()
    seen: list[Any] = []
    stopped = await network.run("Go", sinks=[seen.append])
    assert stopped.stop_reason == StopReason.INTERRUPTED
    (waiting,) = stopped.interrupts
    assert waiting.tool == "management" and waiting.agent == "boss"
    assert waiting.to_agui()["metadata"]["tool"] == "refund"
    starts = [e for e in seen if e.type == "SUBAGENT_STARTED"]
    management, research, billing = starts
    assert (management.name, research.name, billing.name) == ("management", "researcher", "billing")
    assert management.parent_subagent_run_id is None
    assert research.parent_subagent_run_id == management.subagent_run_id
    assert billing.parent_subagent_run_id == management.subagent_run_id
    assert waiting.subagent_run_id == billing.subagent_run_id  # the innermost that waits
    done = await network.run(stopped.resume([waiting.accept()]))
    assert done.output == "Supervisor: Manager: Billing: refunded 30"
    assert REFUNDS == [30]


async def test_usage_rolls_up_two_levels() -> None:
    network, _ = director()
    stopped = await network.run("Go")
    done = await network.run(stopped.resume([stopped.interrupts[0].accept()]))
    assert done.output is not None
    every = stopped.usage.total_tokens + done.usage.total_tokens
    own = sum(r.usage.total_tokens for r in (*stopped.state.results, *done.state.results))
    assert every > own  # the manager's, the researcher's and billing's are in there


@pytest.mark.parametrize("cap", [2, 3, 4, 5])
async def test_a_cap_holds_across_the_hierarchy(cap: int) -> None:
    network, models = director()
    result = await network.run("Go", limits=UsageLimits(max_model_calls=cap))
    assert result.stop_reason == StopReason.USAGE_LIMIT
    requests = sum(len(model.requests) for model in models.values())
    assert requests == cap  # every model of the hierarchy, together: never past the cap
    assert result.limit_exceeded is not None and result.limit_exceeded.actual == cap


@pytest.mark.parametrize("limits", [UsageLimits(max_tool_calls=3), UsageLimits(max_model_calls=3)])
async def test_a_cap_holds_over_a_30_level_chain_of_delegations(limits: UsageLimits) -> None:
    """A delegation in flight is a tool call made: under `max_tool_calls=3` the chain stops
    at the third level, and the leaf's side effect never runs (it ran, with 30 tool calls and
    32 requests, while only recorded calls counted)."""
    from tests.network.run.budgets.delegation import EFFECTS, REQUESTS, chain, clear

    clear()
    events: list[Any] = []
    result = await chain(30).run("Go", limits=limits, sinks=[events.append])
    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert EFFECTS == []
    assert REQUESTS == ["level0", "level1", "level2"]
    started = [e for e in events if e.type == "SUBAGENT_STARTED"]
    if limits.max_tool_calls is not None:
        assert len(started) == 3  # level 2's delegation started, and stopped before asking
    else:
        assert len(started) <= 3
    assert result.limit_exceeded is not None and result.limit_exceeded.actual == 3
    clear()


@pytest.mark.parametrize("cap", [3, 4, 5, 8])
async def test_sub_runs_side_by_side_count_each_others_requests_under_way(cap: int) -> None:
    """Two delegations of one answer run at once: each one's next request is checked with
    the other's under way (sent, not recorded until its call ends), so together they never
    spend past the caller's `max_model_calls` (they went one past it)."""
    import anyio

    from agents import tool

    @tool
    async def dig() -> str:
        """Dig."""
        await anyio.sleep(0.01)  # the other delegate's request is under way meanwhile
        return "deeper"

    def digger(name: str) -> Agent:
        return Agent(name, tools=[dig], model=ScriptedModel(lambda r: call("dig")))

    one, two = digger("one"), digger("two")
    both = [call("one", input="dig"), call("two", input="dig")]
    boss = Agent(
        "boss",
        tools=[one.as_tool(max_steps=50), two.as_tool(max_steps=50)],
        model=ScriptedModel([both, "stopped"]),
    )
    team = Network("team", agents=[boss], router=lambda ctx: boss if ctx.call_count < 2 else None)
    result = await team.run("go", limits=UsageLimits(max_model_calls=cap))

    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert result.spent.model_calls == cap


async def test_a_branchs_sub_run_counts_in_its_siblings_checks() -> None:
    """A sub-run inside one parallel branch: its requests under way count when a sibling
    branch checks the run's limits."""
    import anyio

    from agents import tool
    from network import Parallel

    @tool
    async def dig() -> str:
        """Dig."""
        await anyio.sleep(0.01)
        return "deeper"

    def digger(name: str) -> Agent:
        return Agent(name, tools=[dig], model=ScriptedModel(lambda r: call("dig")))

    helper = digger("helper")
    boss = Agent(
        "boss",
        tools=[helper.as_tool(max_steps=50)],
        model=ScriptedModel(lambda r: call("helper", input="dig")),
    )
    solo = digger("solo")
    fan = Network(
        "fan",
        agents=[boss, solo],
        router=lambda ctx: Parallel(boss, solo, max_steps=50) if ctx.call_count == 0 else None,
    )
    for cap in (3, 4, 6):
        result = await fan.run("go", limits=UsageLimits(max_model_calls=cap))
        assert result.stop_reason == StopReason.USAGE_LIMIT
        assert result.spent.model_calls == cap
