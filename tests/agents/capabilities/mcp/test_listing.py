"""Tools are listed once per connection and cached; `refresh()` and `cache_tools=False` re-list;
a paged listing is read to its end, and one that never ends is refused."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agents import Agent, MCPServer, MCPServerError, ScriptedModel, call
from tests.agents.capabilities.mcp.servers import stdio_server

PAGER = Path(__file__).with_name("paging_server.py")

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


def pager(mode: str, **options: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [str(PAGER), mode], **options)


async def test_every_page_of_a_paged_listing_is_offered() -> None:
    model = ScriptedModel([call("t2"), "ok"])
    result = await Agent("a", tools=[pager("pages")], model=model).run("x")
    assert names(model, 0) == {"t0", "t1", "t2"}
    assert result.state.results[0].tool_calls[0].result == "t2"


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("loop", "it gave the cursor 'again' twice"),
        ("endless", "it did not end within 100 pages"),
        ("twice", "it lists the tool 't0' twice"),
    ],
)
async def test_a_listing_that_never_ends_or_repeats_a_tool_fails_naming_the_server(
    mode: str, why: str
) -> None:
    agent = Agent("a", tools=[pager(mode)], model=ScriptedModel(["never asked"]))
    with pytest.raises(MCPServerError) as raised:
        await agent.run("x")
    assert str(raised.value) == f"MCP server 'pager': its tool listing is unusable: {why}"
    assert raised.value.server == "pager"


async def test_a_tool_with_a_broken_schema_fails_the_listing_unless_it_is_left_out() -> None:
    agent = Agent("a", tools=[pager("broken")], model=ScriptedModel(["never asked"]))
    with pytest.raises(MCPServerError, match="MCP tool 'broken': its inputSchema is not valid"):
        await agent.run("x")
    # a tool `allowed_tools` leaves out is never offered: its schema does not matter (it
    # failed the listing, so a server's one sloppy tool made every other one unusable)
    model = ScriptedModel([call("t0"), "ok"])
    result = await Agent("a", tools=[pager("broken", allowed_tools=["t0"])], model=model).run("x")
    assert names(model, 0) == {"t0"}
    assert result.state.results[0].tool_calls[0].result == "t0"


async def test_a_tool_named_in_the_options_and_not_listed_is_a_warning_naming_it() -> None:
    """A typo in `allowed_tools` offered nothing and one in `outputs_to_state` wrote nothing,
    without a word; now each listing warns, naming the server, the option and the tools."""
    from structlog.testing import capture_logs

    server = stdio_server(
        allowed_tools=["add", "ad"],
        outputs_to_state={"add": {"sum": {"source": "result"}}, "writefile": {"f": {}}},
    )
    model = ScriptedModel(["nothing to do"])
    with capture_logs() as logs:
        await Agent("x", tools=[server], model=model).run("x")
    assert names(model, 0) == {"add"}
    warnings = [log for log in logs if log["event"] == "mcp_tools_not_listed"]
    assert [(w["server"], w["option"], w["tools"]) for w in warnings] == [
        ("testfs", "allowed_tools", ["ad"]),
        ("testfs", "outputs_to_state", ["writefile"]),
    ]
    assert all(w["log_level"] == "warning" for w in warnings)
