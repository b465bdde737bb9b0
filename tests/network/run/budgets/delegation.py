"""Delegations for the budget tests: a chain of agents as tools, and tools that start runs of
their own (`await other.run(...)`, or `run_sync` in a worker thread).

Every model request is counted in `REQUESTS` (by level or by agent) and every side effect in
`EFFECTS`, so a test can say exactly what ran.
"""

from __future__ import annotations

from typing import Any

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network

REQUESTS: list[str] = []
EFFECTS: list[str] = []


def clear() -> None:
    REQUESTS.clear()
    EFFECTS.clear()


@tool
def side_effect(what: str) -> str:
    """Do something that cannot be undone."""
    EFFECTS.append(what)
    return f"did {what}"


def again_while_calling(agent: Agent) -> Any:
    def route(ctx: Any) -> Any:
        last = ctx.last_result
        return agent if last is None or last.tool_calls else None

    return route


def chain(depth: int) -> Network:
    """Level 0 delegates to level 1 (`level1.as_tool()`), ..., level `depth` runs the side
    effect; each level answers with what its delegate said."""

    def script_of(level: int) -> Any:
        def script(request: Any) -> Any:
            REQUESTS.append(f"level{level}")
            last = request.history[-1]
            if last.role == "tool":
                return f"level{level}: {last.content}"
            if level == depth:
                return call("side_effect", what="the leaf's")
            return call(f"level{level + 1}", input="go on")

        return script

    inner: Agent | None = None
    for level in range(depth, -1, -1):
        tools: list[Any] = (
            [side_effect] if inner is None else [inner.as_tool(description="The next level.")]
        )
        inner = Agent(f"level{level}", tools=tools, model=ScriptedModel(script_of(level)))
    assert inner is not None
    return Network("chain", agents=[inner], router=again_while_calling(inner))


def worker(name: str = "worker") -> Agent:
    """Runs the side effect once, then answers (two requests per run)."""

    def script(request: Any) -> Any:
        REQUESTS.append(name)
        last = request.history[-1]
        if last.role == "tool":
            return f"{name} done"
        return call("side_effect", what=f"{name}'s")

    return Agent(name, tools=[side_effect], model=ScriptedModel(script))


def boss(delegate: Any) -> Network:
    """Calls `delegate` (a tool) once, then answers with its result."""

    def script(request: Any) -> Any:
        REQUESTS.append("boss")
        last = request.history[-1]
        if last.role == "tool":
            return f"boss: {last.content}"
        return call(delegate.name)

    agent = Agent("boss", tools=[delegate], model=ScriptedModel(script))
    return Network("office", agents=[agent], router=again_while_calling(agent))


def awaiting_tool(helper: Agent, runs: int = 2) -> Any:
    """A tool that runs `helper` on its own, `runs` times, the way pydantic-ai users write
    a delegation first: `await other.run(...)` inside the tool."""

    @tool
    async def delegate(ctx: ToolContext) -> str:
        """Ask the helper."""
        outputs = [str((await helper.run(f"task {i}")).output) for i in range(runs)]
        return "; ".join(outputs)

    return delegate


def threaded_tool(helper: Agent) -> Any:
    """A blocking tool (a worker thread) that runs `helper` with `run_sync`."""

    @tool(blocking=True)
    def delegate() -> str:
        """Ask the helper."""
        return str(helper.run_sync("task").output)

    return delegate
