"""Tools are listed once per connection and cached; `refresh()` and `cache_tools=False` re-list."""

from __future__ import annotations

import pytest

from agents import Agent, ScriptedModel, call
from tests.agents.capabilities.mcp.servers import stdio_server

pytestmark = pytest.mark.anyio


def names(model: ScriptedModel, request: int) -> set[str]:
    return {s["function"]["name"] for s in model.requests[request].tools or []}


async def test_a_run_lists_once_so_a_tool_added_mid_run_is_not_offered() -> None:
    model = ScriptedModel([call("grow", name="extra"), "done"])
    await Agent("x", tools=[stdio_server()], model=model).run("x")
    assert "extra" not in names(model, 0)
    assert "extra" not in names(model, 1)  # the cached listing


async def test_cache_tools_false_lists_at_every_agent_call() -> None:
    model = ScriptedModel([call("grow", name="extra"), call("extra"), "done"])
    result = await Agent("x", tools=[stdio_server(cache_tools=False)], model=model).run("x")
    assert "extra" in names(model, 1)
    assert result.state.results[1].tool_calls[0].result == {"result": "extra ran"}


async def test_a_held_server_keeps_its_listing_across_runs_until_refresh() -> None:
    server = stdio_server()
    async with server:
        grow = ScriptedModel([call("grow", name="extra"), "grown"])
        await Agent("a", tools=[server], model=grow).run("x")
        cached = ScriptedModel(["ok"])
        await Agent("b", tools=[server], model=cached).run("y")
        assert "extra" not in names(cached, 0)
        await server.refresh()
        refreshed = ScriptedModel(["ok"])
        await Agent("c", tools=[server], model=refreshed).run("z")
        assert "extra" in names(refreshed, 0)
