"""A real MCP server for the tests, written with the SDK's server API (`MCPServer`).

    python server_app.py            serve over stdio
    python server_app.py http       serve over Streamable HTTP on 127.0.0.1, a free port;
                                    prints the port on the first line of stdout, and asks
                                    every request for `Authorization: Bearer test-token`

`write_file` writes under the directory in `MCP_TEST_ROOT` (a small filesystem server).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

TOKEN = "test-token"

server = MCPServer("testfs", log_level="WARNING")


class Written(BaseModel):
    path: str
    bytes: int


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Say `text` back."""
    return text


@server.tool()
def fail() -> str:
    """Always fails, as a tool whose work went wrong."""
    raise ToolError("disk is full")


@server.tool()
def die() -> str:
    """The server process exits at once, as a crashed server."""
    os._exit(3)


@server.tool(structured_output=False)
def shout(text: str) -> str:
    """`text` in capitals, as plain text content (no structured content)."""
    return text.upper()


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def picture() -> Image:
    """A tiny image."""
    return Image(data=b"\x89PNG-test", format="png")


@server.tool(structured_output=False)
def listing() -> str:
    """A JSON object sent as text, as many servers do."""
    return json.dumps({"files": ["main.py", "test_main.py"]})


@server.tool(structured_output=False)
def blob(size: int, char: str = "x") -> str:
    """`size` times `char` as one text block, as a server answering with a huge result."""
    return char * size


@server.tool()
def write_file(path: str, content: str) -> Written:
    """Write `content` to `path` under the server's root."""
    root = Path(os.environ["MCP_TEST_ROOT"])
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    return Written(path=path, bytes=len(content.encode()))


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps `seconds`."""
    await anyio.sleep(seconds)
    return "done"


@server.tool()
async def steps(ctx: Context) -> str:
    """Reports progress as a careless server might: repeated, backwards, a huge message."""
    for progress, message in ((1, "one"), (1, "again"), (0.5, "back"), (2, "x" * 100_000)):
        await ctx.report_progress(progress, 2, message)
        await anyio.sleep(0.1)  # the client emits each before the next (it keeps the latest)
    return "stepped"


@server.tool()
async def wait(seconds: float) -> str:
    """Sleeps `seconds`; a cancelled wait leaves `cancelled` in the server's root."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        (Path(os.environ["MCP_TEST_ROOT"]) / "cancelled").write_text("cancelled")
        raise
    return "waited"


@server.tool()
def grow(name: str) -> str:
    """Adds a tool named `name` to this server (its tool listing changes)."""

    def added() -> str:
        return f"{name} ran"

    server.add_tool(added, name=name, description=f"the grown tool {name}")
    return f"added {name}"


class RequireToken:
    """ASGI middleware: 401 unless the request carries the test bearer token."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {TOKEN}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await self.app(scope, receive, send)


def serve_http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # clients told the port queue until uvicorn accepts
    print(sock.getsockname()[1], flush=True)
    app = server.streamable_http_app()
    config = uvicorn.Config(RequireToken(app), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        serve_http()
    else:
        server.run("stdio")
