"""The tools one agent call offers: the agent's own, plus its MCP servers' (named per the
rule in `agents.mcp.server`).

Local tools keep their names. An MCP tool keeps the server's name for it unless that name is
taken by a local tool or by a tool of another of the agent's servers; then each MCP tool of
that name is offered as `<server name>__<tool name>`. Two servers with the same name offering
the same tool is a `ConfigurationError`, since no prefix tells them apart.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agents.mcp.server import MCPServer
from agents.mcp.tool import ListedTool, MCPTool
from agents.tools.tool import Tool
from network.errors import ConfigurationError

PREFIX_SEPARATOR = "__"


async def offered_tools(
    run: Any, agent_name: str, local: dict[str, Tool], servers: list[MCPServer]
) -> dict[str, Tool]:
    """`local` plus the tools of `servers` for this run, by the name the model calls them."""
    listings: list[tuple[MCPServer, str, list[ListedTool]]] = []
    for server in servers:
        connection = await server.connection(run)
        listings.append((server, connection.name, await server.list_tools(run)))
    counts = Counter(tool.name for _, _, listed in listings for tool in listed)
    tools: dict[str, Tool] = dict(local)
    for server, server_name, listed in listings:
        for tool in listed:
            name = tool.name
            if name in local or counts[name] > 1:
                name = f"{server_name}{PREFIX_SEPARATOR}{tool.name}"
            if name in tools:
                raise ConfigurationError(
                    f"agent {agent_name!r}: two tools would be offered as {name!r} (MCP server "
                    f"{server_name!r}); give the servers distinct names (MCPServer(name=...))"
                )
            tools[name] = MCPTool(
                server,
                tool,
                name,
                outputs_to_state=server.outputs_to_state.get(tool.name),
                timeout=server.timeout,
            )
    return tools
