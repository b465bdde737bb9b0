"""What an MCP tool costs against a local `@tool`: per call step, and per server start and stop.

    python benchmarks/mcp_tools.py [--calls 200] [--starts 5]

One agent, a scripted model asking for `add(1, 2)` at every step. "local" is an `@tool`;
"mcp (held)" is the same tool on the test MCP server (`tests/agents/capabilities/mcp/server_app.py`,
the
SDK's `MCPServer`) started over stdio and held open with `async with`, so the figure is the
JSON-RPC round trip through the SDK plus schema validation. "start + stop" opens and closes
the stdio server (a Python process importing the SDK), as a run that needs it does.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

import anyio

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from agents import Agent, ScriptedModel, call, tool
from tests.agents.capabilities.mcp.servers import stdio_server


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def per_step(tools: list[object], calls: int) -> float:
    model = ScriptedModel([call("add", a=1, b=2)] * calls + ["done"])
    agent = Agent("bench", tools=tools, model=model)  # type: ignore[arg-type]
    started = time.perf_counter()
    await agent.run("x", max_steps=calls + 1)
    return (time.perf_counter() - started) / calls * 1000


async def main(calls: int, starts: int) -> None:
    print(f"local: {await per_step([add], calls):.3f} ms per call step")
    server = stdio_server(allowed_tools=["add"])
    async with server:
        print(f"mcp (held): {await per_step([server], calls):.3f} ms per call step")
    opened, closed = [], []
    for _ in range(starts):
        server = stdio_server()
        started = time.perf_counter()
        await server.__aenter__()
        middle = time.perf_counter()
        await server.__aexit__(None, None, None)
        opened.append((middle - started) * 1000)
        closed.append((time.perf_counter() - middle) * 1000)
    print(
        f"stdio server start: median {statistics.median(opened):.0f} ms, "
        f"stop: median {statistics.median(closed):.0f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    anyio.run(main, args.calls, args.starts)
