"""Agents for the fan-out tests: scripted models and tools that take as long as told."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network.history.messages import ToolCall


def writer_agent(
    name: str,
    writes: dict[str, Any],
    *,
    delay: Callable[[], float] | float = 0.0,
    answer: str | None = None,
) -> Agent:
    """An agent whose one call asks its `write` tool to write `writes` to state, after
    sleeping `delay` seconds in the model and again in the tool (so timings decide which
    branch finishes first), then answers `answer` on a second call."""

    def wait() -> float:
        return delay() if callable(delay) else delay

    @tool
    async def write(ctx: ToolContext) -> str:
        """Write this agent's values to state."""
        await anyio.sleep(wait())
        for key, value in writes.items():
            ctx.kv.set(key, value)
        return f"{name} wrote {sorted(writes)}"

    async def script(request: Any) -> Any:
        await anyio.sleep(wait())
        if request.history and request.history[-1].role == "tool":
            return answer or f"{name} done"
        return ToolCall(f"{name}-call", "write", {})

    return Agent(name, tools=[write], model=ScriptedModel(script))


def text_agent(name: str, text: str | None = None, delay: float = 0.0) -> Agent:
    async def script(request: Any) -> Any:
        await anyio.sleep(delay)
        return text or f"{name} says hi"

    return Agent(name, model=ScriptedModel(script))


__all__ = ["call", "text_agent", "writer_agent"]
