"""Starting the test MCP server (`server_app.py`) for the tests: over stdio or over HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents import MCPServer

APP = str(Path(__file__).with_name("server_app.py"))


def stdio_server(root: Path | None = None, **options: Any) -> MCPServer:
    """The test server, started by the library over stdio."""
    env = {"MCP_TEST_ROOT": str(root)} if root is not None else {}
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    return MCPServer.stdio(sys.executable, [APP], env=env, **options)


@contextmanager
def http_server() -> Iterator[str]:
    """The test server as a Streamable HTTP subprocess on 127.0.0.1; yields its /mcp URL."""
    process = subprocess.Popen(
        [sys.executable, APP, "http"], stdout=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        status = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return status != "Z"
