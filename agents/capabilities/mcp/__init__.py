"""Tools from Model Context Protocol servers: `Agent(tools=[..., MCPServer.stdio(...)])`.

Built on the official `mcp` SDK (the `agent-network[mcp]` extra), which is imported only when
a server is first connected: `import agents` does not load it. See docs/mcp.md.
"""

from agents.capabilities.mcp.capability import MCPTools
from agents.capabilities.mcp.errors import MCPServerError
from agents.capabilities.mcp.server import MCPServer
from agents.capabilities.mcp.tool import ListedTool, MCPTool

__all__ = ["ListedTool", "MCPServer", "MCPServerError", "MCPTool", "MCPTools"]
