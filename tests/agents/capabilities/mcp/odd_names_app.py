"""A real MCP server (the SDK's server API) whose names are what real servers send: its own
name has a `/` (`mcp-servers/everything`), and its tools' names have dots, slashes, spaces,
names made alike by replacing those, and a name past 64 characters. Each tool answers with
its own name. Serves over stdio: `python odd_names_app.py`.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

LONG = "summarize_the_entire_repository_history_with_every_commit_and_author_v2"  # 71
NAMES = ["echo", "get.weather", "get_weather", "files/list all", LONG]

server = MCPServer("mcp-servers/everything", log_level="WARNING")


def _answering(name: str) -> Any:
    def answer() -> str:
        return name

    return answer


for _name in NAMES:
    server.add_tool(_answering(_name), name=_name, description=f"answers {_name!r}")


if __name__ == "__main__":
    server.run("stdio")
