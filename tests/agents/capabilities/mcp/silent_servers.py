"""A program that connects three MCP servers that never answer, at once, and exits at once.

    python silent_servers.py PROBE CONNECT_TIMEOUT [--preload] [--own-loop]

Two stdio servers (`/bin/sleep 600`, which ignores its stdin closing, and a Python process
that reads its stdin and answers nothing) and a Streamable HTTP server on 127.0.0.1 that
accepts connections and never answers: three agent runs, gathered under `asyncio.wait_for`.
The stdio servers get `SILENT_PROBE=PROBE` in their environment, so the test can find every
process this program started. It prints one JSON line, `{"failed_after": s, "error": text}`
(seconds from the runs' start to the first `MCPServerError`), and returns at once, while the
servers' teardowns are under way: `asyncio.run` then cancels them, or with `--own-loop` the
loop is closed without running them. `--preload` imports the mcp SDK first (so the deadline
is the connection's alone); without it, the first connection loads it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time

if "--preload" in sys.argv:
    import mcp.client.client  # noqa: F401

from agents import Agent, MCPServer, MCPServerError, ScriptedModel


def silent_http() -> str:
    """A TCP server on 127.0.0.1 that accepts connections and never answers; its /mcp URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []  # kept open: the connections stay silent, not reset

    def accept() -> None:
        while True:
            accepted.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"


async def main(probe: str, timeout: float) -> None:
    env = {"SILENT_PROBE": probe}
    servers = [
        MCPServer.stdio("/bin/sleep", ["600"], env=env, name="sleep", connect_timeout=timeout),
        MCPServer.stdio(
            sys.executable,
            ["-c", "import sys; sys.stdin.read()"],
            env=env,
            name="mute",
            connect_timeout=timeout,
        ),
        MCPServer.http(silent_http(), name="mute-http", connect_timeout=timeout),
    ]
    runs = [
        Agent(f"agent{i}", tools=[server], model=ScriptedModel(["never asked"])).run("x")
        for i, server in enumerate(servers)
    ]
    started = time.perf_counter()
    try:
        await asyncio.wait_for(asyncio.gather(*runs), timeout=60)
    except MCPServerError as error:
        failed_after = time.perf_counter() - started
        print(json.dumps({"failed_after": failed_after, "error": str(error)}), flush=True)


if __name__ == "__main__":
    probe, timeout = sys.argv[1], float(sys.argv[2])
    if "--own-loop" in sys.argv:
        loop = asyncio.new_event_loop()
        loop.run_until_complete(main(probe, timeout))
        loop.close()  # its pending tasks (the servers' teardowns) never run again
    else:
        asyncio.run(main(probe, timeout))
