"""A run started inside another run counts against it (`network.run.budgets.caller`): the
spelling pydantic-ai users write first, `await other.run(...)` inside a tool, cannot escape
the caller's usage limits, nor its usage report."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, StopReason, UsageLimits
from network.run.budgets.caller import running_run
from tests.network.run.budgets.delegation import (
    EFFECTS,
    REQUESTS,
    awaiting_tool,
    boss,
    clear,
    threaded_tool,
    worker,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    clear()
    yield
    clear()


async def test_await_other_run_inside_a_tool_counts_against_the_callers_limit() -> None:
    office = boss(awaiting_tool(worker()))
    result = await office.run("Go", limits=UsageLimits(max_model_calls=3))
    # without the link: 1 + 2 + 2 requests ran and the report said "1 used"
    assert len(REQUESTS) == 3
    assert REQUESTS == ["boss", "worker", "worker"]
    assert result.stop_reason == StopReason.USAGE_LIMIT
    exceeded = result.limit_exceeded
    assert exceeded is not None and (exceeded.limit, exceeded.actual) == ("max_model_calls", 3)
    assert EFFECTS == ["worker's"]  # the second inner run made no request, so no effect


async def test_a_run_inside_a_tool_checks_the_callers_tool_calls_too() -> None:
    office = boss(awaiting_tool(worker()))
    result = await office.run("Go", limits=UsageLimits(max_tool_calls=2))
    # the boss's delegation (running) and the first worker's side effect: 2 made
    assert EFFECTS == ["worker's"]
    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert result.limit_exceeded is not None and result.limit_exceeded.actual == 2


async def test_what_a_run_inside_a_tool_spends_is_in_the_callers_usage() -> None:
    helper = worker()
    alone = await helper.run("task 0")
    clear()
    office = boss(awaiting_tool(helper, runs=1))
    result = await office.run("Go")
    own = sum(r.usage.total_tokens for r in result.results)
    assert result.usage.total_tokens == own + alone.usage.total_tokens
    assert REQUESTS == ["boss", "worker", "worker", "boss"]


async def test_run_sync_in_a_worker_thread_under_limits_refuses_and_says_how() -> None:
    office = boss(threaded_tool(worker()))
    result = await office.run("Go", limits=UsageLimits(max_model_calls=10))
    assert REQUESTS == ["boss", "boss"]  # the helper never asked its model
    assert EFFECTS == []
    (failed,) = result.tool_errors
    assert "run_sync in another thread" in failed.content
    assert "await network.run(...)" in failed.content
    assert result.stop_reason == StopReason.ROUTER_FINISHED


async def test_run_sync_in_a_worker_thread_without_limits_runs_on_its_own() -> None:
    office = boss(threaded_tool(worker()))
    result = await office.run("Go")
    assert result.tool_errors == []
    assert EFFECTS == ["worker's"]
    assert result.output == "boss: worker done"


async def test_a_run_outside_any_run_is_its_own() -> None:
    result = await worker().run("task", max_steps=5)
    assert result.stop_reason == StopReason.AGENT_ANSWERED
    again = await worker().run("task")  # the first run's end left nothing behind
    assert again.limit_exceeded is None and again.output == "worker done"


async def test_the_running_run_is_known_inside_its_tools_and_forgotten_after() -> None:

    seen: list[object] = []

    @tool
    def look(ctx: ToolContext) -> str:
        """Say which run is running."""
        seen.append(running_run())
        return "ok"

    agent = Agent("a", tools=[look], model=ScriptedModel([call("look")]))
    result = await Network("n", agents=[agent]).run("go")
    assert [getattr(run, "run_id", None) for run in seen] == [result.run_id]
    assert running_run() is None
