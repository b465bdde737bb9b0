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


async def test_a_call_the_caller_cancelled_is_told_no_more_progress() -> None:
    """The run's open agent call is closed as the cancelled run ends; before, that was told
    to the caller as `w finished`, for a request it had cancelled (MCP allows progress only
    for a request under way). A raw JSON-RPC client over the SDK's memory streams."""
    import anyio
    from mcp.shared.memory import create_client_server_memory_streams
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCNotification, JSONRPCRequest

    from agents import Agent, ScriptedModel, call, tool
    from network import Network

    seen: list[str] = []

    @tool
    async def wait() -> str:
        """Waits until cancelled."""
        seen.append("started")
        try:
            await anyio.sleep_forever()
        finally:
            seen.append("ended")
        return "never"

    team = Network("waiter", agents=[Agent("w", model=ScriptedModel([call("wait")]), tools=[wait])])
    server = mcp_server(team)
    opening = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    arguments = {"name": "waiter", "arguments": {"input": "go"}, "_meta": {"progressToken": "tok"}}
    streams = create_client_server_memory_streams()
    async with streams as ((read, write), (s_read, s_write)), anyio.create_task_group() as group:
        group.start_soon(server.run, s_read, s_write, server.create_initialization_options())

        async def send(message: object) -> None:
            await write.send(SessionMessage(message))  # type: ignore[arg-type]

        async def until_answer(request_id: int) -> list[object]:
            others: list[object] = []
            while True:
                message = (await read.receive()).message  # type: ignore[union-attr]
                if getattr(message, "id", None) == request_id:
                    return others
                others.append(message)

        with anyio.fail_after(10):
            await send(JSONRPCRequest(jsonrpc="2.0", id=1, method="initialize", params=opening))
            await until_answer(1)
            await send(JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized"))
            await send(JSONRPCRequest(jsonrpc="2.0", id=2, method="tools/call", params=arguments))
            while "started" not in seen:
                await anyio.sleep(0.01)
            cancel = {"requestId": 2, "reason": "the user moved on"}
            await send(
                JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=cancel)
            )
            while "ended" not in seen:
                await anyio.sleep(0.01)
            await send(JSONRPCRequest(jsonrpc="2.0", id=3, method="tools/list"))
            told = await until_answer(3)
        group.cancel_scope.cancel()
    assert seen == ["started", "ended"]
    assert told == []
