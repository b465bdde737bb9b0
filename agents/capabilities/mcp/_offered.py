"""The tools one agent call offers: the agent's own, plus its MCP servers' (named per the
rule in `agents.capabilities.mcp.server`).

Every name offered to a model matches `^[a-zA-Z0-9_-]{1,64}$`, the names providers accept,
and no two are alike. An MCP tool keeps the server's name for it, made safe (any other
character becomes `_`), unless that name is taken by a local tool or by a tool of another of
the agent's servers; then each MCP tool of that name is offered as
`<server name>__<tool name>`, the server's name made safe too (`mcp-servers/everything`
gives `mcp-servers_everything__echo`). A name still taken after that (two names made alike
by the making safe), or longer than 64 characters, keeps its first characters and ends with
`_` and 8 hex digits of a hash of the server's and the tool's own names: the same from one
request to the next. Local tools keep their names. Two servers with the same name offering
the same tool is a `ConfigurationError`, since no prefix tells them apart.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Any

from agents.capabilities.mcp.server import MCPServer
from agents.capabilities.mcp.tool import ListedTool, MCPTool
from agents.tools.tool import Tool
from network.errors import ConfigurationError

PREFIX_SEPARATOR = "__"
MAX_NAME = 64  # providers refuse longer tool names
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


async def offered_tools(
    run: Any, agent_name: str, local: dict[str, Tool], servers: list[MCPServer]
) -> dict[str, Tool]:
    """`local` plus the tools of `servers` for this run, by the name the model calls them."""
    listings: list[tuple[MCPServer, str, list[ListedTool]]] = []
    for server in servers:
        connection = await server.connection(run)
        listings.append((server, connection.name, await server.list_tools(run)))
    counts = Counter(safe_name(tool.name) for _, _, listed in listings for tool in listed)
    tools: dict[str, Tool] = dict(local)
    seen: set[tuple[str, str]] = set()
    for server, server_name, listed in listings:
        for tool in listed:
            name = safe_name(tool.name)
            if name in local or counts[name] > 1:
                name = f"{safe_name(server_name)}{PREFIX_SEPARATOR}{name}"
            if (server_name, tool.name) not in seen and (name in tools or len(name) > MAX_NAME):
                name = _hashed(name, server_name, tool.name)
            if name in tools or (server_name, tool.name) in seen:
                raise ConfigurationError(
                    f"agent {agent_name!r}: two tools would be offered as {name!r} (MCP server "
                    f"{server_name!r}); give the servers distinct names (MCPServer(name=...))"
                )
            seen.add((server_name, tool.name))
            tools[name] = MCPTool(
                server,
                tool,
                name,
                outputs_to_state=server.outputs_to_state.get(tool.name),
                timeout=server.timeout,
            )
    return tools


def safe_name(name: str) -> str:
    """`name` with every character but letters, digits, `_` and `-` replaced by `_`."""
    return _UNSAFE.sub("_", name) or "_"


def _hashed(name: str, server_name: str, tool_name: str) -> str:
    """`name` cut to fit 64 characters, ending with a hash of the server's and the tool's own
    names (two tools made alike by `safe_name` then differ)."""
    digest = hashlib.sha256(f"{server_name}\0{tool_name}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"
