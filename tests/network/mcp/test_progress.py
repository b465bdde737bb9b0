"""A served run's progress (`network.mcp.progress`): a caller that gives a progress token is
told each finished agent call, on a fresh run and on a thread."""

from __future__ import annotations

import pytest
from mcp import Client

from network.mcp import mcp_server
from tests.network.mcp.team import network

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("on_thread", [False, True], ids=["fresh-run", "thread"])
async def test_a_caller_asking_for_progress_is_told_each_finished_agent_call(
    on_thread: bool,
) -> None:
    told: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        told.append((done, total, message))

    thread = {"thread": "t1"} if on_thread else {}
    async with Client(mcp_server(network)) as client:
        result = await client.call_tool(
            "notes_team", {"input": "buy milk", **thread}, progress_callback=progress
        )
        quiet = await client.call_tool("notes_team", {"input": "no token", **thread})
    assert result.structured_content["output"] == "done: buy milk"
    # the writer noted the input (one call), then answered (another)
    assert told == [(1.0, None, "writer finished"), (2.0, None, "writer finished")]
    assert quiet.structured_content["output"] == "done: no token"  # and nothing more told
