"""Signals between the parts of a run are typed fields of `RunContext`, never `extras` keys."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, RunContext, StopReason, ThreadRef
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
    assert [i.tool for i in ctx.interrupts] == ["book"] == [i.tool for i in first.interrupts]
    assert ctx.persisted and first.persisted
    assert ctx.predictor is not None and ctx.args_listeners  # a sink and predict_state
    assert ctx.extras == {}

    (pending,) = first.interrupts
    resumed = await network.run(
        first.resume([pending.accept()]),
        thread=ThreadRef(first.thread_id, store=store),
        sinks=[sink],
    )
    ctx = seen[-1]
    assert resumed.output == "Done: booked 12A"
    assert ctx.resume == ()  # the run took the answers and acted on them
    assert ctx.interrupts == () and ctx.extras == {}


async def test_a_plain_run_has_no_signals_set() -> None:
    seen: list[RunContext] = []

    def router(ctx: RunContext) -> Any:
        seen.append(ctx)
        return None

    agent = Agent("agent", model=ScriptedModel(["hi"]))
    result = await Network("plain", agents=[agent], router=router).run("x")
    ctx = seen[-1]
    assert result.stop_reason == StopReason.ROUTER_FINISHED and not result.persisted
    assert (ctx.interrupts, ctx.resume, ctx.persisted, ctx.predictor, ctx.args_listeners) == (
        (),
        (),
        False,
        None,
        (),
    )
    assert ctx.router_usage is None and ctx.client_input is None and ctx.extras == {}
