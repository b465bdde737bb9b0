"""A parallel branch runs its agent's tool loop (or a network's router) to its answer, on its
own conversation (`network.run.branch_run`)."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import MaxStepsExceeded, Network, Parallel, StopReason

pytestmark = pytest.mark.anyio


def searcher(seen: list[list[Any]]) -> Agent:
    """The research bot's search agent: searches once for its item, then answers."""

    @tool
    def web_search(query: str, ctx: ToolContext) -> str:
        """Search the web."""
        ctx.kv.set("searched", [query])
        return f"results for {query}"

    def script(request: Any) -> Any:
        seen.append([m.content for m in request.history])
        last = request.history[-1]
        if last.role == "tool":
            return f"summary of {last.content}"
        return call("web_search", query=str(last.content))

    return Agent("search", tools=[web_search], model=ScriptedModel(script))


async def test_a_map_branch_runs_its_tool_loop_to_its_answer_on_its_own_conversation() -> None:
    seen: list[list[Any]] = []
    search = searcher(seen)
    writer = Agent(
        "writer", model=ScriptedModel(lambda r: " | ".join(str(m.content) for m in r.history))
    )

    def router(ctx: Any) -> Any:
        if ctx.call_count == 0:
            return Parallel.map(search, ["cats", "dogs", "owls"], name="searches")
        return writer if ctx.last_result.agent == "search" else None

    network = Network(
        "bot", agents=[search, writer], router=router, state_schema={"searched": {"type": list}}
    )
    result = await network.run("research pets")

    assert result.stop_reason == StopReason.ROUTER_FINISHED
    assert result["searched"] == ["cats", "dogs", "owls"]  # declared order
    branch_results = [r for r in result.results if r.branch is not None]
    assert [(r.branch, r.text) for r in branch_results] == [
        ("searches/search#0", None),  # its tool call
        ("searches/search#0", "summary of results for cats"),
        ("searches/search#1", None),
        ("searches/search#1", "summary of results for dogs"),
        ("searches/search#2", None),
        ("searches/search#2", "summary of results for owls"),
    ]
    # each branch's second request: its own item, tool call and result; never a sibling's
    answering = sorted(h for h in seen if len(h) == 4)
    assert answering == [
        ["research pets", "cats", None, "results for cats"],
        ["research pets", "dogs", None, "results for dogs"],
        ["research pets", "owls", None, "results for owls"],
    ]
    assert "summary of results for owls" in str(result.output)  # the writer read every answer


async def test_a_branch_still_asking_for_tools_at_max_steps_fails_naming_it() -> None:
    @tool
    def again() -> str:
        """Ask again."""
        return "more"

    looping = Agent("looping", tools=[again], model=ScriptedModel(lambda r: call("again")))
    quiet = Agent("quiet", model=ScriptedModel(["fine"]))
    fork = Parallel(looping, quiet, max_steps=3, name="pair")
    network = Network(
        "n", agents=[looping, quiet], router=lambda c: fork if not c.call_count else None
    )

    with pytest.raises(MaxStepsExceeded, match="'pair/looping'.*max_steps=3") as caught:
        await network.run("go")
    assert (caught.value.agent, caught.value.branch, caught.value.max_steps) == (
        "looping",
        "pair/looping",
        3,
    )
    assert len(looping.model.requests) == 3  # type: ignore[attr-defined]

    quiet = Agent("quiet", model=ScriptedModel(["fine"]))
    forgiving = Parallel(looping, quiet, max_steps=2, name="pair", on_error="continue")
    network = Network(
        "n", agents=[looping, quiet], router=lambda c: forgiving if not c.call_count else None
    )
    result = await network.run("go")
    (failure,) = result.failed_branches
    assert (failure.branch, failure.error_type) == ("pair/looping", "MaxStepsExceeded")


async def test_max_steps_is_checked() -> None:
    quiet = Agent("quiet", model=ScriptedModel(["fine"]))
    from network import ConfigurationError

    for bad in (0, -1, 1.5, float("nan")):
        with pytest.raises(ConfigurationError, match="max_steps"):
            Parallel(quiet, max_steps=bad)  # type: ignore[arg-type]


async def test_the_branches_calls_count_in_the_runs_max_iter() -> None:
    seen: list[list[Any]] = []
    search = searcher(seen)
    fork = Parallel.map(search, ["a", "b"], name="s")
    network = Network(
        "n",
        agents=[search],
        router=lambda c: fork,
        max_iter=3,
        state_schema={"searched": {"type": list}},
    )
    result = await network.run("go")
    # two branches fit at the fork; their second calls need two more: only one fits
    assert result.stop_reason == StopReason.MAX_ITER
    assert len(seen) == 3


async def test_a_network_is_a_branch_running_its_own_router_and_agents() -> None:
    seen: list[list[Any]] = []
    search = searcher(seen)
    checker = Agent("checker", model=ScriptedModel(lambda r: f"checked: {r.history[-1].content}"))

    def inner_router(ctx: Any) -> Any:  # search (and read its tool's results), then check
        return [search, search, checker][ctx.call_count] if ctx.call_count < 3 else None

    team = Network("team", agents=[search, checker], router=inner_router)
    solo = Agent("solo", model=ScriptedModel(["solo answer"]))
    fork = Parallel(team, solo, name="both")
    outer = Network(
        "outer",
        agents=[solo],
        router=lambda c: fork if not c.call_count else None,
        state_schema={"searched": {"type": list}},
    )
    result = await outer.run("owls")

    assert [(r.agent, r.branch, r.text) for r in result.results] == [
        ("search", "both/team", None),
        ("search", "both/team", "summary of results for owls"),
        # the checker reads search's answer as search's (`view`), not as its own turn
        ("checker", "both/team", "checked: [agent 'search' answered] summary of results for owls"),
        ("solo", "both/solo", "solo answer"),
    ]
    assert result["searched"] == ["owls"]
    records = result.state.history_of("searched")
    assert [(r.writer.agent, r.writer.branch, r.writer.call_index) for r in records] == [
        ("search", "both/team", 0)
    ]


async def test_a_network_branch_that_reaches_its_max_iter_fails_naming_it() -> None:
    @tool
    def again() -> str:
        """Ask again."""
        return "more"

    looping = Agent("looping", tools=[again], model=ScriptedModel(lambda r: call("again")))
    team = Network("team", agents=[looping], router=lambda c: looping, max_iter=2)
    fork = Parallel(team, name="one")
    outer = Network("outer", agents=[looping], router=lambda c: fork if not c.call_count else None)
    with pytest.raises(MaxStepsExceeded, match="'one/team'.*max_iter=2"):
        await outer.run("go")


async def test_max_tool_calls_counts_the_branches_tool_calls_as_they_are_made() -> None:
    """Each branch checks the run's limits before its next request with every branch's tool
    calls so far: the fan-out stops soon after `max_tool_calls`, not after every tool loop."""
    from network import UsageLimits

    pinged: list[str] = []

    @tool
    def ping(name: str) -> str:
        """Ping."""
        pinged.append(name)
        return "pong"

    def pinger(name: str) -> Agent:
        asks = [call("ping", name=name)] * 3
        return Agent(name, tools=[ping], model=ScriptedModel([*asks, "done"]))

    one, two = pinger("one"), pinger("two")
    fan = Network(
        "fan",
        agents=[one, two],
        router=lambda ctx: Parallel(one, two) if ctx.call_count == 0 else None,
    )
    result = await fan.run("go", limits=UsageLimits(max_tool_calls=2))

    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert result.limit_exceeded is not None
    assert result.limit_exceeded.limit == "max_tool_calls"
    # at most one call per branch past the limit (a sibling's tools under way are not known
    # yet when a branch checks); every tool loop run whole would make 6
    assert 2 <= len(pinged) <= 2 + 1
    assert result.spent.tool_calls == len(pinged)


@pytest.mark.parametrize("max_concurrency", [None, 2])
@pytest.mark.parametrize("cap", [5, 6, 7])
async def test_max_model_calls_counts_the_siblings_requests_under_way(
    cap: int, max_concurrency: int | None
) -> None:
    """A branch's next request is checked with its siblings' requests under way (sent, not
    yet recorded) and the first requests of those not started yet (reserved at the fork):
    the fan-out never spends past `max_model_calls`."""
    import anyio

    from network import UsageLimits

    asked: list[str] = []

    @tool
    async def look(name: str) -> str:
        """Look."""
        await anyio.sleep(0.01)  # the siblings' first calls are under way meanwhile
        return "seen"

    def looker(name: str) -> Agent:
        def script(request: Any) -> Any:
            asked.append(name)
            return "done" if request.history[-1].role == "tool" else call("look", name=name)

        return Agent(name, tools=[look], model=ScriptedModel(script))

    lookers = [looker(f"l{i}") for i in range(5)]
    fan = Network(
        "fan",
        agents=lookers,
        router=lambda ctx: (
            Parallel(*lookers, max_concurrency=max_concurrency) if ctx.call_count == 0 else None
        ),
    )
    result = await fan.run("go", limits=UsageLimits(max_model_calls=cap))

    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert len(asked) == cap  # every branch's first request, then seconds while they fit
    assert result.spent.model_calls == cap


async def test_a_fan_out_inside_a_network_branch_counts_in_the_runs_max_iter() -> None:
    """The run's `max_iter` counts every call, those of a fan-out its network branch makes
    too: the inner fan-out of five did not fit in what the run had left, yet ran whole."""
    said: list[str] = []

    def speaker(name: str) -> Agent:
        return Agent(name, model=ScriptedModel(lambda r: said.append(name) or name))

    five = [speaker(f"x{i}") for i in range(5)]
    team = Network(
        "team",
        agents=five,
        router=lambda c: Parallel(*five, name="in") if not c.call_count else None,
    )
    solo = speaker("solo")
    outer = Network(
        "outer",
        agents=[solo],
        router=lambda c: Parallel(team, solo, name="out") if not c.call_count else None,
        max_iter=3,
    )
    result = await outer.run("go")
    assert result.stop_reason == StopReason.MAX_ITER
    assert len(said) <= 3
    assert said == ["solo"]  # the inner fan-out did not start: its five calls did not fit


async def test_a_network_that_is_its_own_branch_stops_at_max_iter_not_a_recursion_error() -> None:
    """A router that puts its own network in its fan-out nested it without end (no call is
    made before the next fan-out), until Python's RecursionError."""
    a = Agent("a", model=ScriptedModel(lambda r: "hi"))
    networks: list[Network] = []
    loopy = Network(
        "loopy",
        agents=[a],
        router=lambda c: Parallel(networks[0], a, name="self") if not c.call_count else None,
        max_iter=5,
    )
    networks.append(loopy)
    result = await loopy.run("go")
    assert result.stop_reason == StopReason.MAX_ITER
    assert len(result.results) <= 5


@pytest.mark.parametrize("cap", [3, 4, 5, 7])
async def test_max_model_calls_holds_with_a_fan_out_inside_a_network_branch(cap: int) -> None:
    """A network branch's own fan-out: it fits when the run has room for its branches
    exactly (the network branch's reserved call is its first branch's), and its branches'
    requests under way count when a sibling of the network branch checks."""
    import anyio

    from network import UsageLimits

    asked: list[str] = []

    @tool
    async def dig(name: str) -> str:
        """Dig."""
        await anyio.sleep(0.01)
        return "deeper"

    def digger(name: str) -> Agent:
        def script(request: Any) -> Any:
            asked.append(name)
            return call("dig", name=name)

        return Agent(name, tools=[dig], model=ScriptedModel(script))

    x0, x1, solo = digger("x0"), digger("x1"), digger("solo")
    team = Network(
        "team",
        agents=[x0, x1],
        router=lambda c: Parallel(x0, x1, name="in", max_steps=50) if not c.call_count else None,
    )
    outer = Network(
        "outer",
        agents=[solo],
        router=lambda c: (
            Parallel(team, solo, name="out", max_steps=50) if not c.call_count else None
        ),
    )
    result = await outer.run("go", limits=UsageLimits(max_model_calls=cap))
    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert len(asked) == cap
    assert {"x0", "x1", "solo"} <= set(asked)  # the inner fan-out fitted and ran
