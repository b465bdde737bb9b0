"""Supervisors whose tools are agents and networks (`as_tool`), for the sub-run tests.

Every side effect a test counts is appended to a list here: `REFUNDS` (a refund that really
ran, after a person approved it) and `RESEARCHED` (a research tool's runs).
"""

from __future__ import annotations

from typing import Any

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network

REFUNDS: list[int] = []
RESEARCHED: list[str] = []


@tool(requires_confirmation=True)
def refund(amount: int, ctx: ToolContext) -> str:
    """Refund an amount to the customer."""
    REFUNDS.append(amount)
    ctx.kv.set("refunded", amount)
    return f"refunded {amount}"


@tool
def look_up(topic: str, ctx: ToolContext) -> str:
    """Look a topic up."""
    RESEARCHED.append(topic)
    ctx.kv.set("notes", [f"{topic}: found"])
    return f"{topic}: found"


def researcher_script(request: Any) -> Any:
    """Looks the task up once, then answers with what it found."""
    last = request.history[-1]
    if last.role == "tool":
        return f"Research says {last.content}"
    return call("look_up", topic=str(last.content))


def researcher(model: Any = None) -> Agent:
    return Agent(
        "researcher",
        description="Finds facts.",
        tools=[look_up],
        model=model or ScriptedModel(researcher_script),
    )


def billing_script(request: Any) -> Any:
    """Asks to refund 30, then reports the tool's result."""
    last = request.history[-1]
    if last.role == "tool":
        return f"Billing: {last.content}"
    return call("refund", amount=30)


def billing_network(model: Any = None) -> Network:
    """A one-agent billing team whose refund waits for a person."""
    clerk = Agent("clerk", tools=[refund], model=model or ScriptedModel(billing_script))

    def router(ctx: Any) -> Any:
        last = ctx.last_result
        return clerk if last is None or last.tool_calls else None

    return Network(
        "billing", agents=[clerk], router=router, state_schema={"refunded": {"type": int}}
    )


def supervisor_script(tool_name: str, task: str) -> Any:
    """Delegates `task` to `tool_name` once, then answers with the delegate's result."""

    def script(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "tool":
            return f"Supervisor: {last.content}"
        return call(tool_name, input=task)

    return script


def supervised(tools: list[Any], model: Any, state_schema: Any = None, **options: Any) -> Network:
    """A supervisor agent with `tools`, run until it answers."""
    boss = Agent("boss", tools=tools, model=model)

    def router(ctx: Any) -> Any:
        last = ctx.last_result
        return boss if last is None or last.tool_calls else None

    return Network("desk", agents=[boss], router=router, state_schema=state_schema, **options)


def research_team() -> Network:
    """The researcher as a network of its own, run until it answers."""
    agent = researcher()

    def router(ctx: Any) -> Any:
        last = ctx.last_result
        return agent if last is None or last.tool_calls else None

    return Network(
        "research", agents=[agent], router=router, state_schema={"notes": {"type": list[str]}}
    )
