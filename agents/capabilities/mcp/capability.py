"""The MCP tools capability: an agent's `MCPServer`s (given in `tools=[...]`) offer their
tools at the request stage, listed on the run's connection to each server (cached there) and
named by the rule of `agents.capabilities.mcp._offered`."""

from __future__ import annotations

from typing import Any

from agents.capabilities.mcp._offered import offered_tools
from agents.capabilities.mcp.server import MCPServer
from network.run.agent_call import AgentCall
from network.run.capability import Capability


class MCPTools(Capability):
    """The tools of an agent's MCP servers, offered on each of its calls."""

    def __init__(self, owner: str, servers: list[MCPServer], client_schemas: list[Any]) -> None:
        self.owner = owner
        self.servers = servers
        self._client_schemas = client_schemas  # the agent's client tools: offered last

    async def request(self, call: AgentCall) -> None:
        local = dict(call.tools or {})
        tools = await offered_tools(call.run, self.owner, local, self.servers)
        call.tools = tools
        call.schemas = [tool.schema for tool in tools.values()] + self._client_schemas

    def __repr__(self) -> str:
        return f"MCPTools({self.owner!r}, {self.servers!r})"
