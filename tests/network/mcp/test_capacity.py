"""The MCP server's runs in flight are bounded (`max_runs`): a call on no thread holds a slot
as a call on a thread does, and a call over the limit is an `isError` result naming
`server_busy`, answered at once."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from agents import Agent, ScriptedModel, call, tool
from network import Network
from network.mcp import mcp_server

pytestmark = pytest.mark.anyio


async def test_a_call_over_max_runs_is_refused_and_the_slot_comes_back() -> None:
    inside, release = anyio.Event(), anyio.Event()

    @tool
    async def hold() -> str:
        """Wait to be released."""
        inside.set()
        await release.wait()
        return "held"

    def model(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "user" and last.content == "hold":
            return call("hold")
        return "done"

    agent = Agent("a", tools=[hold], model=ScriptedModel(model))
    team = Network("t", agents=[agent], router=lambda c: agent if c.call_count == 0 else None)
    async with Client(mcp_server(team, max_runs=1)) as client, anyio.create_task_group() as group:
        held: list[Any] = []

        async def first() -> None:
            held.append(await client.call_tool("t", {"input": "hold"}))

        group.start_soon(first)
        with anyio.fail_after(10):
            await inside.wait()
        for arguments in ({"input": "hi"}, {"input": "hi", "thread": "th1"}):
            with anyio.fail_after(10):  # at once, not after the held run
                refused = await client.call_tool("t", arguments)
            assert refused.is_error
            assert refused.content[0].text.startswith("refused (server_busy): ")
        release.set()
        with anyio.fail_after(10):
            while not held:
                await anyio.sleep(0.01)
        assert not held[0].is_error
        again = await client.call_tool("t", {"input": "hi", "thread": "th1"})
        assert again.structured_content["output"] == "done"
        again = await client.call_tool("t", {"input": "hi"})
        assert again.structured_content["output"] == "done"
