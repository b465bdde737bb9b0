"""`Parallel`: branches run side by side on the state as at the fork, and join in order."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import (
    ConfigurationError,
    MessageError,
    Network,
    Parallel,
    RoutingError,
    StateConflictError,
    StopReason,
    merge_dicts,
)
from tests.network.parallel.helpers import text_agent, writer_agent

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {
    "found": {"type": list[str]},
    "scores": {"type": dict[str, int], "handler": merge_dicts},
    "summary": {"type": str},
}


def fan_out_once(fork: Any) -> Any:
    def router(ctx: Any) -> Any:
        return fork if ctx.call_count == 0 else None

    return router


async def test_branches_run_at_once_in_one_task_group() -> None:
    # Each branch waits until all three have started: run one after another, they would
    # never get there (the fail_after only keeps a broken build from hanging).
    started = 0
    everyone = anyio.Event()

    def agent(name: str) -> Agent:
        async def script(request: Any) -> str:
            nonlocal started
            started += 1
            if started == 3:
                everyone.set()
            await everyone.wait()
            return f"{name} ok"

        return Agent(name, model=ScriptedModel(script))

    a, b, c = agent("a"), agent("b"), agent("c")
    network = Network("n", agents=[a, b, c], router=fan_out_once(Parallel(a, b, c)))
    with anyio.fail_after(10):
        result = await network.run("go")
    assert [r.text for r in result.results] == ["a ok", "b ok", "c ok"]


async def test_max_concurrency_caps_branches_running_at_once() -> None:
    running = peak = 0

    def agent(name: str) -> Agent:
        async def script(request: Any) -> str:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await anyio.sleep(0.01)
            running -= 1
            return name

        return Agent(name, model=ScriptedModel(script))

    agents = [agent(f"a{i}") for i in range(5)]
    network = Network("n", agents=agents, router=fan_out_once(Parallel(*agents, max_concurrency=2)))
    result = await network.run("go")
    assert peak == 2
    assert [r.agent for r in result.results] == [f"a{i}" for i in range(5)]


async def test_each_branch_sees_the_state_and_conversation_of_the_fork() -> None:
    seen: dict[str, Any] = {}

    async def slow_instructions(ctx: Any) -> str:
        await anyio.sleep(0.02)  # a has written and answered by now, in its own branch
        seen["b state"] = ctx.kv.get("found")
        return "b"

    async def b_script(request: Any) -> str:
        seen["b history"] = [m.content for m in request.history]
        return "b answer"

    first = text_agent("first", "before the fork")
    a = writer_agent("a", {"found": ["a"]})
    b = Agent("b", system=slow_instructions, model=ScriptedModel(b_script))

    def router(ctx: Any) -> Any:
        if ctx.call_count == 0:
            return first
        if ctx.call_count == 1:
            ctx.kv.set("found", ["router"])
            return Parallel(a, b)
        return None

    network = Network("n", agents=[first, a, b], router=router, state_schema=SCHEMA)
    result = await network.run("go")
    # b finished last, yet saw neither a's messages nor a's write
    assert seen["b state"] == ["router"]
    assert seen["b history"] == ["go", "[agent 'first' answered] before the fork"]
    assert [m.content for m in result.messages] == [
        "go",
        "before the fork",
        None,  # a's tool call
        "a wrote ['found']",
        "a done",  # a's tool loop went on to its answer, on its own conversation
        "b answer",
    ]
    assert result["found"] == ["router", "a"]


async def test_writes_merge_in_declared_order_whatever_finishes_first() -> None:
    async def run(delays: tuple[float, float, float]) -> Any:
        agents = [
            writer_agent("a", {"found": ["a1", "a2"], "scores": {"x": 1}}, delay=delays[0]),
            writer_agent("b", {"found": ["b1"], "scores": {"x": 2, "y": 2}}, delay=delays[1]),
            writer_agent("c", {"found": ["c1"], "scores": {"z": 3}}, delay=delays[2]),
        ]
        network = Network(
            "n", agents=agents, router=fan_out_once(Parallel(*agents)), state_schema=SCHEMA
        )
        finished: list[str] = []

        async def sink(event: Any) -> None:
            branch = (event.metadata or {}).get("branch")
            if event.type == "STEP_FINISHED" and branch and branch not in finished:
                finished.append(branch)  # its first call finished (its tool call)

        return await network.run("go", sinks=[sink]), finished

    # 50 ms apart: 10 ms was inverted once by a machine at load 20
    forward, forward_order = await run((0.0, 0.05, 0.1))
    backward, backward_order = await run((0.1, 0.05, 0.0))
    assert forward_order == ["a+b+c/a", "a+b+c/b", "a+b+c/c"]
    assert backward_order == list(reversed(forward_order))  # the timing did reverse it
    assert forward.state.snapshot() == backward.state.snapshot()
    assert forward["found"] == ["a1", "a2", "b1", "c1"]
    assert forward["scores"] == {"x": 2, "y": 2, "z": 3}  # b's x over a's: declared order
    for one, other in zip(forward.results, backward.results, strict=True):
        assert (one.agent, one.branch, one.state_delta) == (
            other.agent,
            other.branch,
            other.state_delta,
        )
    assert [m.content for m in forward.messages] == [m.content for m in backward.messages]


async def test_two_branches_replacing_one_key_conflict_naming_both_writers() -> None:
    a = writer_agent("a", {"summary": "from a", "found": ["a"]})
    b = writer_agent("b", {"found": ["b"]})
    c = writer_agent("c", {"summary": "from c"}, delay=0.01)
    network = Network(
        "n", agents=[a, b, c], router=fan_out_once(Parallel(a, b, c)), state_schema=SCHEMA
    )

    with pytest.raises(StateConflictError) as caught:
        await network.run("go", state={"summary": "seed"})

    error = caught.value
    assert error.key == "summary"
    first, second = error.writers
    assert (first.agent, first.tool, first.branch) == ("a", "write", "a+b+c/a")
    assert (second.agent, second.tool, second.branch) == ("c", "write", "a+b+c/c")
    assert "'summary'" in str(error) and "'a'" in str(error) and "'c'" in str(error)
    partial = error.partial_result
    assert partial["summary"] == "seed"  # nothing of the fan-out merged
    assert "found" not in partial
    assert partial.results == []


@pytest.mark.parametrize(("rule", "expected"), [("first", "from a"), ("last", "from c")])
async def test_a_key_that_declares_a_conflict_rule_resolves_it(rule: str, expected: str) -> None:
    a = writer_agent("a", {"summary": "from a"}, delay=0.01)
    c = writer_agent("c", {"summary": "from c"})
    schema = {"summary": {"type": str, "conflict": rule}}
    network = Network("n", agents=[a, c], router=fan_out_once(Parallel(a, c)), state_schema=schema)
    result = await network.run("go")
    assert result["summary"] == expected


async def test_a_conflict_function_merges_later_branches_into_earlier() -> None:
    a = writer_agent("a", {"summary": "A"}, delay=0.01)
    b = writer_agent("b", {"summary": "B"})
    schema = {"summary": {"type": str, "conflict": lambda current, new: f"{current}|{new}"}}
    network = Network("n", agents=[a, b], router=fan_out_once(Parallel(a, b)), state_schema=schema)
    assert (await network.run("go"))["summary"] == "A|B"


async def test_a_conflict_function_that_raises_is_a_conflict_naming_the_key_and_both() -> None:
    a = writer_agent("a", {"summary": "A"}, delay=0.01)
    b = writer_agent("b", {"summary": "B"})

    def refuse(current: str, new: str) -> str:
        raise ValueError("cannot merge these: postgres://admin:hunter2@db")

    schema = {"summary": {"type": str, "conflict": refuse}}
    network = Network("n", agents=[a, b], router=fan_out_once(Parallel(a, b)), state_schema=schema)
    with pytest.raises(StateConflictError, match="'summary'.*raised ValueError") as caught:
        await network.run("go", state={"summary": "seed"})

    error = caught.value
    assert error.key == "summary"
    assert [w.branch for w in error.writers] == ["a+b/a", "a+b/b"]
    # the message goes out as it is (an AG-UI client's RUN_ERROR, a supervisor's model):
    # the function's own text, which may hold anything, stays in the cause
    assert "hunter2" not in str(error)
    assert isinstance(error.__cause__, ValueError) and "hunter2" in str(error.__cause__)
    assert error.partial_result["summary"] == "seed"  # nothing of the fan-out merged


async def test_a_conflict_function_is_not_asked_to_merge_into_a_key_deleted_before() -> None:
    """An earlier branch deleted the key: nothing to merge into, the later value is written
    as it is (the function never sees a None it would have to make sense of)."""

    @tool
    def drop(ctx: ToolContext) -> str:
        """Delete the summary."""
        ctx.kv.delete("summary")
        return "dropped"

    a = Agent("a", tools=[drop], model=ScriptedModel([call("drop"), "a done"]))
    b = writer_agent("b", {"summary": "B"})
    merged: list[tuple[Any, Any]] = []

    def join(current: Any, new: Any) -> Any:
        merged.append((current, new))
        return f"{current}|{new}"

    schema = {"summary": {"type": str, "conflict": join}}
    network = Network("n", agents=[a, b], router=fan_out_once(Parallel(a, b)), state_schema=schema)
    result = await network.run("go", state={"summary": "seed"})
    assert result["summary"] == "B"
    assert merged == []


async def test_a_bad_conflict_rule_is_refused_when_the_schema_is_built() -> None:
    with pytest.raises(ConfigurationError, match="'summary'.*conflict"):
        Network(
            "n",
            agents=[text_agent("a")],
            router=lambda ctx: None,
            state_schema={"summary": {"type": str, "conflict": "newest"}},
        )


async def test_history_names_branches_and_usage_and_max_iter_count_each() -> None:
    a, b, c = text_agent("a"), text_agent("b"), text_agent("c")
    calls_seen: list[int] = []

    def router(ctx: Any) -> Any:
        calls_seen.append(ctx.call_count)
        return Parallel(a, b, c, name="trio") if ctx.call_count == 0 else None

    result = await Network("n", agents=[a, b, c], router=router).run("go")
    assert [(r.agent, r.branch) for r in result.results] == [
        ("a", "trio/a"),
        ("b", "trio/b"),
        ("c", "trio/c"),
    ]
    assert calls_seen == [0, 3]  # the fan-out counted three calls
    per_call = result.results[0].usage.total_tokens
    assert result.usage.total_tokens == sum(r.usage.total_tokens for r in result.results)
    assert result.usage.total_tokens == 3 * per_call > 0

    capped = await Network("n", agents=[a, b, c], router=router, max_iter=2).run("go")
    assert capped.stop_reason == StopReason.MAX_ITER
    assert capped.results == []  # the fan-out does not fit: none of it ran


async def test_history_of_a_key_shows_which_branch_wrote_what() -> None:
    a = writer_agent("a", {"found": ["a"]})
    b = writer_agent("b", {"found": ["b"]})
    network = Network(
        "n", agents=[a, b], router=fan_out_once(Parallel(a, b, name="search")), state_schema=SCHEMA
    )
    result = await network.run("go")
    records = result.state.history_of("found")
    assert [(r.writer.agent, r.writer.branch, r.writer.call_index) for r in records] == [
        ("a", "search/a", 0),
        ("b", "search/b", 2),  # a's tool loop made calls 0 and 1
    ]


async def test_map_runs_one_agent_over_items_each_with_its_input() -> None:
    seen: list[tuple[str, Any]] = []

    async def script(request: Any) -> str:
        return f"summary of {request.history[-1].content}"

    summarizer = Agent("summarizer", model=ScriptedModel(script))

    def instructions(ctx: Any) -> str:
        seen.append((ctx.input, ctx.branch.item))
        return "summarize"

    summarizer.system = instructions
    summarizer._template = None
    items = [{"doc": "alpha"}, {"doc": "beta"}]

    def router(ctx: Any) -> Any:
        if ctx.call_count == 0:
            return Parallel.map(summarizer, items, input=lambda item: item["doc"])
        return None

    result = await Network("n", agents=[summarizer], router=router).run("summarize these")
    assert [r.branch for r in result.results] == [
        "summarizer.map/summarizer#0",
        "summarizer.map/summarizer#1",
    ]
    assert [r.text for r in result.results] == ["summary of alpha", "summary of beta"]
    assert sorted(seen, key=lambda s: s[0]) == [("alpha", items[0]), ("beta", items[1])]
    assert [m.content for m in result.messages] == [
        "summarize these",
        "alpha",
        "summary of alpha",
        "beta",
        "summary of beta",
    ]


async def test_parallel_arguments_are_checked() -> None:
    a = text_agent("a")
    with pytest.raises(ConfigurationError, match="on_error"):
        Parallel(a, on_error="ignore")
    with pytest.raises(ConfigurationError, match="max_concurrency"):
        Parallel(a, max_concurrency=0)
    with pytest.raises(ConfigurationError, match="at least one"):
        Parallel()
    with pytest.raises(ConfigurationError, match="no items"):
        Parallel.map(a, [])
    with pytest.raises(ConfigurationError, match="not another fan-out"):
        Parallel(a, Parallel(a))
    with pytest.raises(ConfigurationError, match="returned int"):
        Parallel.map(a, [1], input=lambda item: item)
    network = Network("n", agents=[a], router=fan_out_once(Parallel(a, "ghost")))
    with pytest.raises(RoutingError, match="'ghost'"):
        await network.run("go")


@pytest.mark.parametrize("items", [None, 3, object()])
async def test_map_over_what_is_not_iterable_is_refused_naming_the_agent(items: Any) -> None:
    """`Parallel.map(agent, None)` was a bare TypeError naming no agent."""
    with pytest.raises(ConfigurationError, match=r"Parallel.map over agent 'a': items must be"):
        Parallel.map(text_agent("a"), items)


@pytest.mark.parametrize(
    ("text", "problem"),
    [("a\x00b", "a NUL character (at 1)"), ("x\ud800", "a lone surrogate (at 1)")],
)
async def test_a_mapped_input_no_message_can_hold_is_refused_before_any_branch_runs(
    text: str, problem: str
) -> None:
    """A run's input with a NUL or a lone surrogate is a MessageError; a mapped branch's was
    taken, its model asked (and paid), and then the request's encoding or the thread's commit
    failed (items are often a model's answer: a planner's searches)."""
    a = text_agent("a")
    with pytest.raises(
        MessageError, match=r"^Parallel.map 'a.map': the input of item 1 holds "
    ) as refused:
        Parallel.map(a, ["fine", text])
    assert problem in str(refused.value) and (refused.value.index, refused.value.field) == (
        1,
        "input",
    )
    network = Network("n", agents=[a], router=lambda ctx: Parallel.map(a, [text]))
    with pytest.raises(MessageError, match="the input of item 0"):
        await network.run("go")
    assert a.model.requests == []  # type: ignore[attr-defined]


async def test_the_same_agent_twice_gets_numbered_branches() -> None:
    a = text_agent("a")
    result = await Network(
        "n", agents=[a], router=fan_out_once(Parallel(a, "a", name="twice"))
    ).run("go")
    assert [r.branch for r in result.results] == ["twice/a#0", "twice/a#1"]
