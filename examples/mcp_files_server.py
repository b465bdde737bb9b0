"""A small filesystem MCP server, written with the official `mcp` SDK's server API.

It serves three tools over stdio: `write_file`, `read_file` and `list_files`, confined to the
folder in the `FILES_ROOT` environment variable (a path that would leave it is refused with an
error result). `examples/mcp_codegen.py` starts it; any MCP client can:

    FILES_ROOT=out python examples/mcp_files_server.py
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer("files", log_level="WARNING")


class Written(BaseModel):
    """What `write_file` reports: the path written and its size in bytes."""

    path: str
    bytes: int


def _inside(path: str) -> Path:
    root = Path(os.environ.get("FILES_ROOT", ".")).resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise ToolError(f"{path!r} is outside the folder this server may write to")
    return target


@server.tool()
def write_file(path: str, content: str) -> Written:
    """Write `content` to the file at `path` (relative to the server's folder)."""
    target = _inside(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    return Written(path=path, bytes=len(content.encode()))


@server.tool()
def read_file(path: str) -> str:
    """The text of the file at `path`."""
    return _inside(path).read_text()


@server.tool()
def list_files() -> list[str]:
    """Every file under the server's folder, relative paths, sorted."""
    root = _inside(".")
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


if __name__ == "__main__":
    server.run("stdio")
