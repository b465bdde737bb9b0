"""The MCP SDK is loaded only when a server is first connected, never by `import agents`;
nor is structlog by the MCP modules (their logger loads it on first use)."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_packages_and_defining_a_server_does_not_import_the_sdk() -> None:
    code = (
        "import sys, network, agents, routers, network.mcp\n"
        "from agents import Agent, MCPServer\n"
        "Agent('a', tools=[MCPServer.stdio('x'), MCPServer.http('http://127.0.0.1:1/mcp')])\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(loaded & {'mcp', 'jsonschema', 'httpx2', 'structlog'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
