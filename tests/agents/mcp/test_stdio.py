"""An agent uses the tools of a real MCP server started over stdio (`server_app.py`)."""

from __future__ import annotations

import pytest

from agents import Agent, ScriptedModel, call, tool
from network import Network
from tests.agents.mcp.servers import stdio_server

pytestmark = pytest.mark.anyio


async def test_agent_calls_an_mcp_tool_and_reads_its_result() -> None:
    model = ScriptedModel([call("add", a=2, b=3), "2 + 3 = 5"])
    agent = Agent("calc", tools=[stdio_server()], model=model)
    result = await agent.run("add 2 and 3")
    assert result.output == "2 + 3 = 5"
    record = result.state.results[0].tool_calls[0]
    assert not record.is_error, record.error
    assert record.result == {"result": 5}
    offered = {s["function"]["name"]: s["function"] for s in model.requests[0].tools}
    assert offered["add"]["description"] == "Add two integers."
    assert offered["add"]["parameters"]["required"] == ["a", "b"]
    assert offered["add"]["parameters"]["properties"]["a"]["type"] == "integer"
