"""A network whose tool keeps a value of a class this file defines (a typed state key), run
by `agent-network worker` processes, each of which imports this file by its path. Its side
effects are counted, and a call blocked to be killed, as `crash_network.effect` does."""

from __future__ import annotations

import dataclasses
from typing import Any

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network
from network.history.messages import ToolMessage
from tests.network.durable.crash_network import effect


@dataclasses.dataclass
class Point:
    """Where the tool placed it: recorded with pickle, by this module's name."""

    x: int


@tool
def place(n: int, ctx: ToolContext) -> str:
    """Place a point."""
    effect("tool:place", ctx.run.input if ctx.run is not None else "")
    ctx.state.kv.set("at", Point(n))
    return "placed"


def answer(request: Any) -> Any:
    if isinstance(request.history[-1], ToolMessage):
        effect("model:after", request.history[0].content)
        return "placed it"
    effect("model:first", request.history[0].content)
    return call("place", n=7)


placer = Network(
    "placer",
    agents=[Agent("placer", description="places", tools=[place], model=ScriptedModel(answer))],
    router=lambda ctx: "placer" if ctx.call_count < 2 else None,
    state_schema={"at": {"type": Point}},
)
