"""`mcp_server(network)`: the network as one MCP tool that runs it, called in process by the SDK's
own client."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from network.errors import ConfigurationError
from network.mcp import mcp_server, run_tool_name
from tests.network.mcp.team import network

pytestmark = pytest.mark.anyio


async def check_a_run(client: Client) -> None:
    listed = await client.list_tools()
    assert [tool.name for tool in listed.tools] == ["notes_team"]
    schema = listed.tools[0].input_schema
    assert schema["required"] == ["input"] and "state" in schema["properties"]
    result = await client.call_tool("notes_team", {"input": "buy milk", "state": {"user": "ann"}})
    assert not result.is_error, result.content
    assert result.content[0].text == "done: buy milk"
    assert result.structured_content == {
        "output": "done: buy milk",
        "stop_reason": "router_finished",
        "state": {"notes": ["buy milk"], "answer": "done: buy milk", "user": "ann"},
    }


async def test_the_network_is_one_tool_that_runs_it_in_process() -> None:
    async with Client(mcp_server(network)) as client:
        await check_a_run(client)


async def test_a_failed_run_and_bad_input_are_error_results() -> None:
    async with Client(mcp_server(network)) as client:
        failed = await client.call_tool("notes_team", {"input": "explode"})
        assert failed.is_error
        assert "ModelError: the provider is down" in failed.content[0].text
        bad = await client.call_tool("notes_team", {"input": 3, "extra": 1})
        assert bad.is_error and "input" in bad.content[0].text
        refused = await client.call_tool("notes_team", {"input": "x", "state": {"notes": 5}})
        assert refused.is_error and "notes" in refused.content[0].text
        ok = await client.call_tool("notes_team", {"input": "still serving"})
        assert ok.structured_content["output"] == "done: still serving"


async def test_the_server_names_itself_by_the_network_and_the_library_version() -> None:
    import importlib.metadata

    async with Client(mcp_server(network)) as client:
        info = client.server_info
    assert info.name == "notes team"
    assert info.version == importlib.metadata.version("agent-network")  # was ""


def test_the_tool_name_is_the_network_name_made_safe() -> None:
    assert run_tool_name(network) == "notes_team"


@pytest.mark.parametrize("tool_name", ["bad name!", "", "x" * 65, "web.search", 5])
def test_a_tool_name_providers_refuse_is_a_configuration_error(tool_name: object) -> None:
    """Before: "bad name!" and 65 characters were served (a client's provider refuses them
    at its first request), "" was taken for the default, 5 was pydantic's ValidationError."""
    with pytest.raises(ConfigurationError, match="mcp_server tool_name"):
        mcp_server(network, tool_name=tool_name)  # type: ignore[arg-type]


def test_a_description_that_is_no_string_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="mcp_server description must be a string"):
        mcp_server(network, description=5)  # type: ignore[arg-type]


async def test_a_tool_name_given_is_the_one_served() -> None:
    async with Client(mcp_server(network, tool_name="take-notes")) as client:
        listed = await client.list_tools()
        assert [tool.name for tool in listed.tools] == ["take-notes"]
        result = await client.call_tool("take-notes", {"input": "hi"})
        assert result.structured_content["output"] == "done: hi"


async def test_an_unknown_tool_is_a_protocol_error_naming_it() -> None:
    async with Client(mcp_server(network)) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("no_such_tool", {"input": "x"})
        assert raised.value.code == INVALID_PARAMS
        assert "'no_such_tool'" in raised.value.message and "'notes_team'" in raised.value.message
        ok = await client.call_tool("notes_team", {"input": "still serving"})
        assert ok.structured_content["output"] == "done: still serving"


async def test_a_call_the_client_cancels_ends_its_run_and_frees_its_thread() -> None:
    import anyio

    from agents import Agent, ScriptedModel, call, tool
    from network import Network
    from network.threads import MemoryStore

    seen: list[str] = []
    release = anyio.Event()

    @tool
    async def wait() -> str:
        """Waits until released."""
        seen.append("started")
        try:
            await release.wait()
        except anyio.get_cancelled_exc_class():
            seen.append("cancelled")
            raise
        return "released"

    def answer(request: object) -> object:
        last = request.messages[-1]  # type: ignore[attr-defined]
        return call("wait") if last.role == "user" else "done"

    team = Network("waiter", agents=[Agent("w", model=ScriptedModel(answer), tools=[wait])])
    async with Client(mcp_server(team, store=MemoryStore())) as client:
        with anyio.move_on_after(0.5):
            await client.call_tool("waiter", {"input": "go", "thread": "t"})
        with anyio.fail_after(5):
            while "cancelled" not in seen:
                await anyio.sleep(0.02)
        release.set()
        again = await client.call_tool("waiter", {"input": "again", "thread": "t"})
    assert seen == ["started", "cancelled", "started"]
    assert not again.is_error, again.content  # the thread was not left busy
