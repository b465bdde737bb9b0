"""A network served as a Model Context Protocol server: one tool that runs the whole team.

`mcp_server(network)` builds the server (the official `mcp` SDK's low-level `Server`, from the
`agent-network[mcp]` extra); `serve_mcp(network, transport=...)` serves it over stdio or
Streamable HTTP; `agent-network mcp FILE:NETWORK` does the same from the command line.
"""

from network.mcp.serve import serve_mcp
from network.mcp.server import mcp_server, run_tool_name

__all__ = ["mcp_server", "run_tool_name", "serve_mcp"]
