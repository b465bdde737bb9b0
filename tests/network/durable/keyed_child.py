"""A child process of the idempotency-key test: `python -m tests.network.durable.keyed_child
DB RUN_ID MODE` (see `run_child`) runs a boss whose model calls `charge` itself, then a clerk
agent as a tool (`agent.as_tool`, a sub-run) whose own model calls `charge` too.

Each `charge` that runs counts one side effect (`crash_network.effect`):
`tool:charge <where> <ctx.idempotency_key> <ctx.run.run_id>`, so the test can kill the process
inside either one and compare what the tool saw on both executions. The clerk's model names
its calls as a provider does, with a new random id each time it is asked."""

from __future__ import annotations

import uuid
from typing import Any

from agents import Agent, ScriptedModel, ToolContext, tool
from agents.models.scripted import call
from network import Network, RunContext
from network.history.messages import ToolCall, ToolMessage
from tests.network.durable.crash_network import effect
from tests.network.durable.run_child import run_child


@tool
def charge(where: str, ctx: ToolContext) -> str:
    """Charge, from `where`."""
    effect("tool:charge", f"{where} {ctx.idempotency_key} {ctx.run.run_id}")
    return "charged"


def _clerk(request: Any) -> Any:
    effect("model:clerk", "go")
    if isinstance(request.history[-1], ToolMessage):
        return "the clerk charged"
    return ToolCall(f"call_{uuid.uuid4().hex[:12]}", "charge", {"where": "sub-run"})


def _boss(request: Any) -> Any:
    effect("model:boss", "go")
    answered = sum(isinstance(message, ToolMessage) for message in request.history)
    if answered == 0:
        return call("charge", where="run")
    if answered == 1:
        return call("clerk", input="charge")
    return "boss is done"


clerk = Agent("clerk", description="charges", tools=[charge], model=ScriptedModel(_clerk))
boss = Agent("boss", tools=[charge, clerk.as_tool()], model=ScriptedModel(_boss))


def _route(ctx: RunContext) -> Any:
    last = ctx.last_result
    return boss if last is None or last.tool_calls else None


shop = Network("shop", agents=[boss], router=_route)

if __name__ == "__main__":
    run_child(shop)
