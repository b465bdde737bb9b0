"""A failing branch: `on_error="fail"` cancels the rest and merges nothing, `"continue"`
merges the others and lists it; on a thread a later run re-runs only the failed branches;
cancelling the run cancels every branch."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, ToolContext, tool
from network import ModelError, Network, Parallel, StopReason, ThreadRef
from network.errors import StateConflictError
from network.history.messages import ToolCall
from network.threads import ThreadStore
from tests.network.parallel.helpers import writer_agent

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {"found": {"type": list[str]}}


def failing_agent(name: str, *, after: float = 0.0) -> Agent:
    async def script(request: Any) -> Any:
        await anyio.sleep(after)
        raise ModelError(f"{name}: provider down", model="scripted")

    return Agent(name, model=ScriptedModel(script))


def sleeping_agent(name: str, cancelled: list[str], asked: list[str] | None = None) -> Agent:
    """An agent whose model never answers; it notes when it is asked and when cancelled."""

    async def script(request: Any) -> Any:
        if asked is not None:
            asked.append(name)
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(name)
            raise

    return Agent(name, model=ScriptedModel(script))


def once(fork: Any) -> Callable[[Any], Any]:
    return lambda ctx: fork if ctx.call_count == 0 else None


async def test_fail_cancels_the_other_branches_and_merges_nothing() -> None:
    cancelled: list[str] = []
    a = writer_agent("a", {"found": ["a"]})  # finishes before b fails: still not merged
    b = failing_agent("b", after=0.01)
    c = sleeping_agent("c", cancelled)
    network = Network("n", agents=[a, b, c], router=once(Parallel(a, b, c)), state_schema=SCHEMA)

    with anyio.fail_after(10), pytest.raises(ModelError, match="b: provider down") as caught:
        await network.run("go")

    assert cancelled == ["c"]
    assert any("'a+b+c/b'" in note for note in caught.value.__notes__)
    partial = caught.value.partial_result  # type: ignore[attr-defined]
    assert partial.results == []
    assert "found" not in partial
    assert [m.content for m in partial.messages] == ["go"]


async def test_continue_merges_the_others_and_lists_the_failed_ones() -> None:
    a = writer_agent("a", {"found": ["a"]}, delay=0.01)
    b = failing_agent("b")
    c = writer_agent("c", {"found": ["c"]})
    network = Network(
        "n",
        agents=[a, b, c],
        router=once(Parallel(a, b, c, on_error="continue")),
        state_schema=SCHEMA,
    )

    result = await network.run("go")

    assert result.stop_reason == StopReason.ROUTER_FINISHED
    assert result["found"] == ["a", "c"]
    (failure,) = result.failed_branches
    assert (failure.branch, failure.agent, failure.error_type) == ("a+b+c/b", "b", "ModelError")
    assert "provider down" in failure.message
    assert [(r.agent, r.error is not None) for r in result.results] == [
        ("a", False),  # a's tool call
        ("a", False),  # its answer
        ("b", True),
        ("c", False),
        ("c", False),
    ]
    assert result.results[2].output == []


async def test_a_resumed_thread_run_reruns_only_the_failed_branch(
    store: ThreadStore,
) -> None:
    model_calls: Counter[str] = Counter()
    flaky_ok = False

    def counted(name: str, fail: Callable[[], bool]) -> Agent:
        @tool
        def record(ctx: ToolContext) -> str:
            """Record a finding."""
            ctx.kv.set("found", [name])
            return "noted"

        async def script(request: Any) -> Any:
            if request.history[-1].role == "tool":
                return "recorded"  # the branch's second call: its answer
            model_calls[name] += 1
            if fail():
                raise ModelError(f"{name} failed", model="scripted")
            return ToolCall(f"{name}-{model_calls[name]}", "record", {})

        return Agent(name, tools=[record], model=ScriptedModel(script))

    a = counted("a", lambda: False)
    b = counted("b", lambda: not flaky_ok)
    c = counted("c", lambda: False)
    fork = Parallel(a, b, c, on_error="continue", name="search")

    def run_router(ctx: Any) -> Any:
        # each run: the fan-out once (the second run's comes back for the failed branch)
        if ctx.call_count == 0:
            return fork
        return None

    network = Network("n", agents=[a, b, c], router=run_router, state_schema=SCHEMA)
    first = await network.run("go", thread=ThreadRef("t1", store=store))
    assert [f.branch for f in first.failed_branches] == ["search/b"]
    assert first["found"] == ["a", "c"]

    flaky_ok = True
    second = await network.run("again", thread=ThreadRef("t1", store=store))

    assert model_calls == {"a": 1, "b": 2, "c": 1}  # only b ran again
    assert second.failed_branches == []
    assert second["found"] == ["a", "c", "b"]
    assert [(r.branch, r.error is None) for r in second.results] == [
        ("search/a", True),  # a's tool call and its answer
        ("search/a", True),
        ("search/b", False),
        ("search/c", True),
        ("search/c", True),
        ("search/b", True),
        ("search/b", True),
    ]
    third = await network.run("once more", thread=ThreadRef("t1", store=store))
    assert model_calls == {"a": 2, "b": 3, "c": 2}  # complete: the fan-out runs whole again
    assert third["found"] == ["a", "c", "b", "a", "b", "c"]


async def test_cancelling_the_run_cancels_every_branch() -> None:
    cancelled: list[str] = []
    asked: list[str] = []
    agents = [sleeping_agent(name, cancelled, asked) for name in ("a", "b", "c")]
    network = Network("n", agents=agents, router=once(Parallel(*agents)))

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: network.run("go"))
        # every branch in its model call (a fixed 10 ms after the last one's step started
        # could cancel it before it got there on a loaded machine)
        with anyio.fail_after(10):
            while len(asked) < 3:
                await anyio.sleep(0.001)
        group.cancel_scope.cancel()

    assert sorted(cancelled) == ["a", "b", "c"]


async def test_a_branch_waiting_for_confirmation_stops_the_run_after_the_join() -> None:
    from agents import call

    @tool(requires_confirmation=True)
    def book(seat: str, ctx: ToolContext) -> str:
        """Book a seat."""
        ctx.kv.set("seat", seat)
        return "booked"

    def script(request: Any) -> Any:
        return "done" if request.history[-1].role == "tool" else call("book", seat="1A")

    a = Agent("a", tools=[book], model=ScriptedModel(script))
    b = Agent("b", model=ScriptedModel(["b says"]))
    network = Network("n", agents=[a, b], router=once(Parallel(a, b)))

    first = await network.run("go")
    assert first.stop_reason == StopReason.INTERRUPTED
    assert [r.branch for r in first.results] == ["a+b/a", "a+b/b"]  # b joined too
    (pending,) = first.interrupts
    assert (pending.agent, pending.tool) == ("a", "book")
    resumed = await network.run(first.resume([pending.accept()]))
    assert resumed["seat"] == "1A"


async def test_a_later_run_on_the_thread_sees_which_branch_wrote_a_key(
    store: ThreadStore,
) -> None:
    a = writer_agent("a", {"found": ["a"]}, delay=0.01)
    b = writer_agent("b", {"found": ["b"]})
    network = Network(
        "n", agents=[a, b], router=once(Parallel(a, b, name="pair")), state_schema=SCHEMA
    )
    await network.run("go", thread=ThreadRef("t2", store=store))

    later = Network("n", agents=[a, b], router=lambda ctx: None, state_schema=SCHEMA)
    result = await later.run("look", thread=ThreadRef("t2", store=store))
    records = result.state.history_of("found")
    assert [(r.writer.agent, r.writer.branch, r.writer.call_index) for r in records] == [
        ("a", "pair/a", 0),
        ("b", "pair/b", 2),  # a's tool loop made calls 0 and 1
    ]


def summarizing(name: str, fail: Callable[[], bool], calls: Counter[str]) -> Agent:
    """An agent whose tool writes the key `summary` (a replacing key) with its name."""

    @tool
    def summarize(ctx: ToolContext) -> str:
        """Write the summary."""
        ctx.kv.set("summary", name)
        return "written"

    async def script(request: Any) -> Any:
        calls[name] += 1
        if fail():
            raise ModelError(f"{name} failed", model="scripted")
        if request.history and request.history[-1].role == "tool":
            return "done"
        return ToolCall(f"{name}-{calls[name]}", "summarize", {})

    return Agent(name, tools=[summarize], model=ScriptedModel(script))


@pytest.mark.parametrize("conflict", [None, "first", "last"])
async def test_a_rerun_branch_is_conflict_checked_against_its_committed_siblings(
    store: ThreadStore, conflict: str | None
) -> None:
    calls: Counter[str] = Counter()
    b_ok = False
    a = summarizing("a", lambda: False, calls)
    b = summarizing("b", lambda: not b_ok, calls)
    fork = Parallel(a, b, on_error="continue", name="sum")
    schema: dict[str, Any] = {"summary": {"type": str}}
    if conflict is not None:
        schema["summary"]["conflict"] = conflict
    network = Network("n", agents=[a, b], router=once(fork), state_schema=schema)
    first = await network.run("go", thread=ThreadRef("t3", store=store))
    assert first["summary"] == "a" and [f.branch for f in first.failed_branches] == ["sum/b"]

    b_ok = True
    if conflict is None:  # both branches replace the key: refused, naming both writers
        with pytest.raises(StateConflictError, match="'summary'") as caught:
            await network.run("again", thread=ThreadRef("t3", store=store))
        assert [(w.agent, w.branch) for w in caught.value.writers] == [
            ("a", "sum/a"),
            ("b", "sum/b"),
        ]
        thread = await store.get_thread("t3")
        assert thread is not None and thread.state["summary"] == "a"  # as it was
        return
    second = await network.run("again", thread=ThreadRef("t3", store=store))
    assert calls == {"a": 2, "b": 3}  # b re-ran alone (each: a tool call, then its answer)
    assert second["summary"] == {"first": "a", "last": "b"}[conflict]
