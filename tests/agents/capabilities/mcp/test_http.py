"""An agent uses a real MCP server over Streamable HTTP on 127.0.0.1, with an auth header."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents import Agent, MCPServer, MCPServerError, ScriptedModel, call
from tests.agents.capabilities.mcp.server_app import TOKEN
from tests.agents.capabilities.mcp.servers import http_server


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server() as address:
        yield address


@pytest.mark.anyio
async def test_tools_over_http_with_the_auth_header(url: str) -> None:
    server = MCPServer.http(url, headers={"Authorization": f"Bearer {TOKEN}"})
    model = ScriptedModel([[call("add", a=20, b=22), call("fail")], "42"])
    result = await Agent("calc", tools=[server], model=model).run("x")
    added, failed = result.state.results[0].tool_calls
    assert added.result == {"result": 42}
    assert failed.is_error and "disk is full" in failed.error
    assert result.output == "42"


@pytest.mark.anyio
async def test_a_held_http_session_serves_several_runs(url: str) -> None:
    server = MCPServer.http(url, headers={"Authorization": f"Bearer {TOKEN}"}, name="remote")
    async with server:
        for number in range(2):
            model = ScriptedModel([call("echo", text=str(number)), "ok"])
            result = await Agent("a", tools=[server], model=model).run("x")
            assert result.state.results[0].tool_calls[0].result == {"result": str(number)}


@pytest.mark.anyio
async def test_without_the_header_the_run_fails_naming_the_server(url: str) -> None:
    server = MCPServer.http(url, name="remote")
    with pytest.raises(MCPServerError, match="'remote'") as caught:
        await Agent("a", tools=[server], model=ScriptedModel(["never"])).run("x")
    assert caught.value.server == "remote"


@pytest.mark.anyio
async def test_a_password_in_the_url_is_shown_as_stars(url: str) -> None:
    # the URL names a server given no name= in its errors and repr, before it names itself:
    # they showed the password (the server refuses it here, so the run fails)
    with_password = url.replace("http://", "http://admin:hunter2@")
    server = MCPServer.http(with_password)
    with pytest.raises(MCPServerError) as caught:
        await Agent("a", tools=[server], model=ScriptedModel(["never"])).run("x")
    shown = url.replace("http://", "http://admin:***@")
    assert str(caught.value).startswith(f"MCP server {shown!r} could not be started")
    assert caught.value.server == shown
    assert "hunter2" not in f"{caught.value} {server!r}"
    assert server.url == with_password  # what it connects to keeps it


@pytest.mark.anyio
async def test_an_http_server_that_dies_mid_run_gives_error_results_and_the_run_ends_well() -> None:
    with http_server() as own_url:
        server = MCPServer.http(own_url, headers={"Authorization": f"Bearer {TOKEN}"})
        model = ScriptedModel([call("die"), call("echo", text="hello?"), "it is gone"])
        result = await Agent("a", tools=[server], model=model).run("x")
    died, after = result.state.results[0].tool_calls[0], result.state.results[1].tool_calls[0]
    assert died.is_error and "failed" in died.error
    assert after.is_error and "failed" in after.error
    assert result.output == "it is gone"
