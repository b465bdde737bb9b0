"""A child process of the sub-run crash test: `python -m tests.network.durable.subrun_child
DB RUN_ID MODE` (see `run_child`) runs a supervisor whose model calls a clerk agent as a tool
(`agent.as_tool`), whose own model calls `pay`.

Side effects are counted in the crash tests' log (`crash_network.effect`): each model call
(`model:<agent> go`) and each payment (`tool:pay <the sub-run's run id>`), so the test can
kill the process inside the payment and see which run id each execution of it had."""

from __future__ import annotations

from typing import Any

from agents import Agent, ScriptedModel, ToolContext, tool
from agents.models.scripted import call
from network import Network, RunContext
from network.history.messages import ToolMessage
from tests.network.durable.crash_network import effect
from tests.network.durable.run_child import run_child


@tool
def pay(amount: int, ctx: ToolContext) -> str:
    """Pay `amount`."""
    effect("tool:pay", f"{ctx.run.run_id} {ctx.idempotency_key} {ctx.run.thread_id}")
    return f"paid {amount}"


def _clerk(request: Any) -> Any:
    effect("model:clerk", "go")
    if isinstance(request.history[-1], ToolMessage):
        return "the clerk paid"
    return call("pay", amount=5)


def _boss(request: Any) -> Any:
    effect("model:boss", "go")
    if isinstance(request.history[-1], ToolMessage):
        return "boss is done"
    return call("clerk", input="pay 5")


clerk = Agent("clerk", description="pays", tools=[pay], model=ScriptedModel(_clerk))
boss = Agent("boss", tools=[clerk.as_tool()], model=ScriptedModel(_boss))


def _route(ctx: RunContext) -> Any:
    last = ctx.last_result
    return boss if last is None or last.tool_calls else None


office = Network("office", agents=[boss], router=_route)

if __name__ == "__main__":
    run_child(office)
