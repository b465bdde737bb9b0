"""A network whose tool calls `sys.exit()` for the input "exit" (as a helper built on argparse
does on arguments it refuses), and raises `CancelledError` for "cancel" (as awaiting a future
another task cancelled does), run by `agent-network worker` processes."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network
from network.history.messages import ToolMessage


@tool
def act(ctx: ToolContext) -> str:
    """Act on the request."""
    asked = ctx.run.input if ctx.run is not None else ""
    if asked == "exit":
        sys.exit(2)
    if asked == "cancel":
        raise asyncio.CancelledError
    return "acted"


def answer(request: Any) -> Any:
    return "done" if isinstance(request.history[-1], ToolMessage) else call("act")


exiting = Network(
    "exiting",
    agents=[Agent("actor", description="acts", tools=[act], model=ScriptedModel(answer))],
    router=lambda ctx: "actor" if ctx.call_count < 2 else None,
)
