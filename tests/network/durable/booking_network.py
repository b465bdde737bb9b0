"""A network whose run stops on a confirmation, then continues (the interrupt tests).

The booker asks for `book(seat)`, a tool that needs a person's confirmation: the run stops
with `StopReason.INTERRUPTED`. Resumed, the accepted call books the seat and the booker
answers. Every router decision, model call and tool call appends one line to the
`AN_DURABLE_LOG` file (`crash_network.effect`, which also blocks the call chosen by
`AN_KILL_AT` so that the test can kill the process in it).
"""

from __future__ import annotations

from typing import Any

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, RunContext
from tests.network.durable.crash_network import effect

RUN = ["router", "model:booker"]
"""The side effects of the run, up to its interrupt."""
RESUMED = ["tool:book", "router", "model:booker", "router"]
"""The side effects of its continuation, once the call was accepted."""


@tool(requires_confirmation=True)
def book(seat: str, ctx: ToolContext) -> str:
    """Book a seat."""
    effect("tool:book", seat)
    ctx.kv.set("seat", seat)
    ctx.kv.set("bookings", ctx.kv.get("bookings", 0) + 1)
    return f"booked {seat}"


def answer(request: Any) -> Any:
    last = request.history[-1]
    effect("model:booker", last.role)
    if last.role == "tool":
        return f"Done: {last.content}"
    return call("book", seat="12A")


def route(ctx: RunContext) -> Any:
    effect("router", str(ctx.call_count))
    last = ctx.last_result
    return booker if last is None or last.tool_calls else None


booker = Agent("booker", description="books seats", tools=[book], model=ScriptedModel(answer))
booking = Network(
    "booking",
    agents=[booker],
    router=route,
    state_schema={"seat": {"type": str}, "bookings": {"type": int}},
)
