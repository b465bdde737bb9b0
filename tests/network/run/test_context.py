"""`RunContext` is what user code sees of a run; signals between the parts of a run are typed
fields of its engine's bookkeeping (`ctx.engine`, a `RunBookkeeping`), never `extras` keys, and
a capability's per-run state is its own (`ctx.local`)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, RunContext, StopReason, ThreadRef
from network.history.results import Usage
from network.run.context import RunBookkeeping
from network.threads import MemoryStore

pytestmark = pytest.mark.anyio


def seat_network(seen: list[RunContext]) -> Network:
    @tool(requires_confirmation=True)
    def book(seat: str, ctx: ToolContext) -> str:
        ctx.kv.set("seat", seat)
        return f"booked {seat}"

    def script(request: Any) -> Any:
        last = request.history[-1]
        return f"Done: {last.content}" if last.role == "tool" else call("book", seat="12A")

    agent = Agent("agent", tools=[book], model=ScriptedModel(script))

    def router(ctx: RunContext) -> Any:
        seen.append(ctx)
        last = ctx.last_result
        return agent if last is None or last.tool_calls else None

    return Network(
        "seats",
        agents=[agent],
        router=router,
        predict_state={"seat": {"tool": "book", "tool_argument": "seat"}},
    )


async def test_interrupts_resume_persistence_and_prediction_leave_extras_to_user_code() -> None:
    seen: list[RunContext] = []
    network = seat_network(seen)
    store = MemoryStore()
    events: list[Any] = []

    async def sink(event: Any) -> None:
        events.append(event)

    first = await network.run("Book", thread=ThreadRef("t", store=store), sinks=[sink])
    ctx = seen[-1]
    assert first.stop_reason == StopReason.INTERRUPTED
    books = ctx.engine
    assert [i.tool for i in books.interrupts] == ["book"] == [i.tool for i in first.interrupts]
    assert books.persisted and first.persisted
    assert books.args_listeners  # a sink and predict_state: the predictor follows arguments
    (following,) = books.locals.values()  # the predictive state capability's own, per run
    assert following.predictor is not None
    assert ctx.extras == {}

    (pending,) = first.interrupts
    resumed = await network.run(
        first.resume([pending.accept()]),
        thread=ThreadRef(first.thread_id, store=store),
        sinks=[sink],
    )
    ctx = seen[-1]
    assert resumed.output == "Done: booked 12A"
    assert ctx.engine.resume == ()  # the run took the answers and acted on them
    assert ctx.engine.interrupts == () and ctx.extras == {}


async def test_a_plain_run_has_no_signals_set() -> None:
    seen: list[RunContext] = []

    def router(ctx: RunContext) -> Any:
        seen.append(ctx)
        return None

    agent = Agent("agent", model=ScriptedModel(["hi"]))
    result = await Network("plain", agents=[agent], router=router).run("x")
    ctx = seen[-1]
    assert result.stop_reason == StopReason.ROUTER_FINISHED and not result.persisted
    books = ctx.engine
    assert (books.interrupts, books.resume, books.persisted, books.args_listeners) == (
        (),
        (),
        False,
        (),
    )
    assert books.router_usage is None and books.client_input is None and ctx.extras == {}
    assert books.locals == {}  # no capability kept anything


# What user code reads of a run (docs/routing.md, docs/tools.md, docs/parallel.md); the engine's
# bookkeeping is one field beside them.
PUBLIC_FIELDS = [
    "network",
    "state",
    "input",
    "run_id",
    "thread_id",
    "call_count",
    "stack",
    "last_result",
    "agent",
    "deps",
    "extras",
    "branch",
    "failed_branches",
    "engine",
]


def test_the_context_user_code_sees_has_a_few_fields_and_the_bookkeeping_one_more() -> None:
    assert [f.name for f in dataclasses.fields(RunContext)] == PUBLIC_FIELDS
    books = {f.name for f in dataclasses.fields(RunBookkeeping)}
    assert {"interrupts", "steps", "emitter", "budget", "guardrails", "locals"} <= books
    assert not books & set(PUBLIC_FIELDS)


async def test_usage_and_resources_read_the_bookkeeping() -> None:
    seen: list[tuple[str, int]] = []

    @asynccontextmanager
    async def open_db() -> AsyncIterator[str]:
        yield "conn"

    async def look(ctx: RunContext) -> str:
        seen.append((await ctx.resource("db"), ctx.usage.total_tokens))
        return "Answer."

    agent = Agent("agent", model=ScriptedModel(["hi", "again"]), system=look)

    def router(ctx: RunContext) -> Any:
        return agent if ctx.call_count < 2 else None

    network = Network("n", agents=[agent], router=router, resources={"db": open_db})
    result = await network.run("x")
    # the second call's instructions see the first call's tokens, counted on the bookkeeping
    assert seen == [("conn", 0), ("conn", result.usage.total_tokens // 2)]
    ctx = RunContext(network=network, state=network.new_state(), input="x", run_id="r")
    ctx.add_usage(Usage(prompt_tokens=2, completion_tokens=3, total_tokens=5, estimated=True))
    assert ctx.usage == Usage(prompt_tokens=2, completion_tokens=3, total_tokens=5, estimated=True)
    assert ctx.engine.prompt_tokens == 2 and ctx.engine.usage_estimated
