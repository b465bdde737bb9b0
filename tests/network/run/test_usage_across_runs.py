"""Usage and limits across runs: `RunResult.spent` counts a run's requests, its sub-runs'
included, and `network.run(..., usage=figures)` carries usage and limits from run to run
(pydantic-ai's `usage=`), so a session of several runs shares one budget."""

from __future__ import annotations

import math
from typing import Any

import pytest

from agents import Agent, ScriptedModel, call, tool
from network import ConfigurationError, Network, StopReason, UsageFigures, UsageLimits
from network.run.subrun import SpentLater

pytestmark = pytest.mark.anyio

ASKED: list[str] = []


@tool
def search(query: str) -> str:
    """Search flights."""
    return f"flights for {query}"


@tool
def pick_seat(seat: str) -> str:
    """Pick a seat."""
    return f"seat {seat} is yours"


def booking_desk() -> Network:
    """Each run: the agent calls one tool named in the message, then answers."""

    def script(request: Any) -> Any:
        ASKED.append("agent")
        last = request.history[-1]
        if last.role == "tool":
            return f"Done: {last.content}"
        text = str(last.content)
        if text.startswith("seat"):
            return call("pick_seat", seat=text.split()[-1])
        return call("search", query=text)

    agent = Agent("desk", tools=[search, pick_seat], model=ScriptedModel(script))
    return Network(
        "desk",
        agents=[agent],
        router=lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )


@pytest.fixture(autouse=True)
def _clean() -> None:
    ASKED.clear()


async def test_a_session_of_runs_shares_one_budget() -> None:
    desk = booking_desk()
    session = UsageFigures()
    limits = UsageLimits(max_model_calls=5)
    first = await desk.run("Paris in May", usage=session, limits=limits)
    again = await desk.run("Paris in June", usage=session, limits=limits)
    assert first.stop_reason == again.stop_reason == StopReason.ROUTER_FINISHED
    assert (session.model_calls, session.tool_calls) == (4, 2)
    seat = await desk.run("seat 12A", usage=session, limits=limits)
    # alone, this run would fit (2 requests); the session has one left
    assert seat.stop_reason == StopReason.USAGE_LIMIT
    assert seat.limit_exceeded is not None and seat.limit_exceeded.actual == 5
    assert len(ASKED) == 5 == session.model_calls
    assert seat.spent.model_calls == 1  # this run's own
    assert session.input_tokens + session.output_tokens == sum(
        r.spent.input_tokens + r.spent.output_tokens for r in (first, again, seat)
    )


async def test_usage_is_carried_without_limits_too() -> None:
    desk = booking_desk()
    session = UsageFigures()
    first = await desk.run("Paris in May", usage=session)
    second = await desk.run("seat 3C", usage=session)
    assert session.model_calls == first.spent.model_calls + second.spent.model_calls == 4
    assert session.tool_calls == 2
    assert session.output_tokens == first.usage.completion_tokens + second.usage.completion_tokens


def researcher() -> Agent:
    def script(request: Any) -> Any:
        ASKED.append("researcher")
        last = request.history[-1]
        if last.role == "tool":
            return f"found {last.content}"
        return call("search", query=str(last.content))

    return Agent("researcher", tools=[search], model=ScriptedModel(script))


def supervisor() -> Network:
    def script(request: Any) -> Any:
        ASKED.append("boss")
        asked = sum(1 for m in request.history if m.role == "tool")
        if asked < 2:
            return call("researcher", input=f"leg {asked + 1}")
        return "Both legs found."

    boss = Agent("boss", tools=[researcher().as_tool()], model=ScriptedModel(script))
    return Network(
        "trip",
        agents=[boss],
        router=lambda ctx: boss if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )


@pytest.mark.parametrize("limits", [None, UsageLimits(max_model_calls=100)])
async def test_spent_counts_every_request_sub_runs_included(limits: UsageLimits | None) -> None:
    result = await supervisor().run("Plan both legs", limits=limits)
    assert result.output == "Both legs found."
    assert len(ASKED) == 7  # the boss asked 3 times, each of its 2 delegations 2 times
    assert len(result.results) == 3  # what summing the records sees
    assert result.spent.model_calls == 7
    assert result.spent.tool_calls == 4  # 2 delegations, and the researcher's 2 searches
    assert result.spent.output_tokens == result.usage.completion_tokens


async def test_a_continued_session_counts_sub_runs_in_its_usage() -> None:
    session = UsageFigures()
    await supervisor().run("Plan both legs", usage=session)
    assert session.model_calls == 7
    limits = UsageLimits(max_model_calls=9)
    stopped = await supervisor().run("Plan both legs", usage=session, limits=limits)
    assert stopped.stop_reason == StopReason.USAGE_LIMIT
    assert len(ASKED) == 9 == session.model_calls


@pytest.mark.parametrize(
    ("usage", "named"),
    [
        ("7 requests", "usage must be UsageFigures"),
        (UsageFigures(model_calls=-1), "usage.model_calls"),
        (UsageFigures(cost_usd=math.nan), "usage.cost_usd"),
        (UsageFigures(input_tokens=math.inf), "usage.input_tokens"),  # type: ignore[arg-type]
    ],
)
async def test_bad_usage_is_refused_before_anything_runs(usage: Any, named: str) -> None:
    with pytest.raises(ConfigurationError, match=named):
        await booking_desk().run("Paris", usage=usage)
    assert ASKED == []


@pytest.mark.parametrize("limits", [None, UsageLimits(max_model_calls=100)])
async def test_a_sub_run_inside_a_parallel_branch_counts_in_the_run(
    limits: UsageLimits | None,
) -> None:
    """A branch's own context ends at the join: what its sub-runs spent joins the run's."""
    from network import Parallel

    helper = Agent("helper", model=ScriptedModel(lambda request: "helped"))
    asking = Agent(
        "asking",
        tools=[helper.as_tool(description="Helps.")],
        model=ScriptedModel([call("helper", input="x"), "asked"]),  # its tool loop: 2 calls
    )
    quiet = Agent("quiet", model=ScriptedModel(["quiet done"]))
    fan = Network(
        "fan",
        agents=[asking, quiet],
        router=lambda ctx: Parallel(asking, quiet) if ctx.call_count == 0 else None,
    )
    result = await fan.run("go", limits=limits)
    alone = await helper.run("x")
    own = sum(r.usage.total_tokens for r in result.results)
    assert result.usage.total_tokens == own + alone.usage.total_tokens
    assert result.spent.model_calls == 4  # asking twice, quiet, and the helper asking asked for
    assert result.spent.tool_calls == 1


async def test_spent_is_counted_when_read_and_pickles_as_its_figures() -> None:
    import pickle

    result = await supervisor().run("Plan both legs")
    assert isinstance(result.spent_later, SpentLater)  # nothing counted at the run's end
    again = pickle.loads(pickle.dumps(result))
    assert again.spent == result.spent and result.spent.model_calls == 7
