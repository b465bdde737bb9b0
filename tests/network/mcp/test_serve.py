"""`agent-network mcp` (`serve_mcp`): a network served as an MCP server, called by the SDK's own
client over stdio and over Streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from network.mcp import mcp_server, serve_mcp
from tests.network.mcp.team import SECRET, network
from tests.network.mcp.test_server import check_a_run

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]
TEAM = "tests/network/mcp/team.py:network"


def command_env() -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT)}


async def test_agent_network_mcp_serves_over_stdio() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "network.cli", "mcp", TEAM],
        env=command_env(),
        cwd=str(ROOT),
    )
    async with Client(params) as client:
        await check_a_run(client)


async def test_an_answer_with_a_lone_surrogate_reaches_a_stdio_client_mended() -> None:
    """The SDK could not write a result holding a lone surrogate: nothing was sent and the
    client waited for its answer forever. It gets U+FFFD in its place, as a thread keeps it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "network.cli", "mcp", "tests/network/mcp/lone_team.py:network"],
        env=command_env(),
        cwd=str(ROOT),
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            result = await client.call_tool("lone", {"input": "hi"})
    assert not result.is_error and result.content[0].text == "bad \ufffd text"
    assert result.structured_content is not None
    assert result.structured_content["output"] == "bad \ufffd text"
    assert result.structured_content["state"] == {"said": "bad \ufffd text"}


async def test_a_failed_run_hands_the_client_a_reference_not_its_exception() -> None:
    from structlog.testing import capture_logs

    with capture_logs() as logs:  # the application's structlog (stdlib's is the other path)
        async with Client(mcp_server(network)) as client:
            failed = await client.call_tool("notes_team", {"input": "leak"})
    text = failed.content[0].text
    assert failed.is_error
    assert SECRET not in text and "postgres" not in text and "RuntimeError" not in text
    reference = re.search(r"internal error \(reference (err_\w+)\)", text)
    assert reference is not None, text
    (logged,) = [line for line in logs if line.get("reference") == reference.group(1)]
    assert logged["event"] == "mcp_run_failed" and logged["log_level"] == "error"
    assert SECRET in str(logged["exc_info"])  # the whole exception, for the operator


@pytest.fixture
def http_server() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "network.cli", "mcp", TEAM, "--transport", "http", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **command_env()},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "over MCP at http://127.0.0.1:" in line, line
        yield line.rsplit(" ", 1)[1].strip(), process
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def http_command(http_server: tuple[str, subprocess.Popen[str]]) -> str:
    return http_server[0]


async def test_agent_network_mcp_serves_over_streamable_http(http_command: Any) -> None:
    async with Client(http_command) as client:
        await check_a_run(client)


async def test_over_http_the_client_gets_a_reference_and_the_server_log_the_error(
    http_server: tuple[str, subprocess.Popen[str]],
) -> None:
    url, process = http_server
    async with Client(url) as client:
        failed = await client.call_tool("notes_team", {"input": "leak"})
    text = failed.content[0].text
    assert failed.is_error and SECRET not in text
    reference = re.search(r"reference (err_\w+)", text)
    assert reference is not None, text
    process.terminate()
    _, log = process.communicate(timeout=10)
    lines = log.splitlines()
    at = next(i for i, line in enumerate(lines) if reference.group(1) in line)
    assert any(SECRET in line for line in lines[at:]), log  # the traceback, for the operator


def test_agent_network_mcp_warns_when_bound_beyond_this_machine(
    capsys: Any, quiet_logs: None
) -> None:
    from network.cli.main import main

    # (quiet_logs: the command configures structlog on captured stderr; reset after the test)

    # An address this machine lacks: the warning comes first, then one error line, no traceback.
    status = main(
        [
            "mcp",
            "tests/network/cli/example_network.py:network",
            "--transport",
            "http",
            "--host",
            "203.0.113.1",
            "--port",
            "0",
        ]
    )
    captured = capsys.readouterr()
    assert status == 2
    assert "WARNING: the MCP server is bound to 203.0.113.1, not 127.0.0.1" in captured.err
    assert "error: cannot listen on 203.0.113.1:0" in captured.err
    assert "Traceback" not in captured.err


async def test_an_agent_of_another_network_sees_the_served_runs_progress(
    http_command: str,
) -> None:
    """Both halves over Streamable HTTP: the library's MCP client asks for progress (a live
    sink watches its run), the served network reports each finished agent call, and the
    calling run's sink gets them as TOOL_CALL_PROGRESS events of the call."""
    from agents import Agent, MCPServer, ScriptedModel, call

    team = MCPServer.http(http_command, name="team")
    model = ScriptedModel([call("notes_team", input="buy milk"), "asked the team"])
    events: list[Any] = []
    result = await Agent("boss", tools=[team], model=model).run("x", sinks=[events.append])
    (record,) = result.state.results[0].tool_calls
    assert record.result["output"] == "done: buy milk"
    progress = [e.value for e in events if e.type.value == "CUSTOM"]
    assert [(p["progress"], p["message"], p["server"]) for p in progress] == [
        (1, "writer finished", "team"),
        (2, "writer finished", "team"),
    ]


async def test_serve_mcp_on_a_port_no_socket_can_have_is_a_configuration_error() -> None:
    from network.errors import ConfigurationError

    # (it was the socket module's OverflowError)
    with pytest.raises(
        ConfigurationError, match="port must be an int >= 0 and <= 65535, got 70000"
    ):
        await serve_mcp(network, transport="http", port=70_000)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        # before: bound every interface of the machine, with none of loopback's checks of
        # Origin and Host (the CLI's --host refuses it)
        ({"host": ""}, "serve_mcp host must name an address"),
        ({"host": "  "}, "serve_mcp host must name an address"),
        ({"host": 5}, "serve_mcp host must name an address"),  # was a TypeError
        ({"port": True}, "serve_mcp port must be an int"),  # was served on port 1
        ({"port": "8000"}, "serve_mcp port must be an int"),  # was a TypeError
        ({"path": 5}, "MCP path must start with '/'"),  # was an AttributeError
        ({"transport": "HTTP"}, "MCP transport must be 'stdio' or 'http'"),
    ],
)
async def test_serve_mcp_refuses_where_it_cannot_listen_before_anything_is_made(
    options: dict[str, Any], says: str
) -> None:
    from network.errors import ConfigurationError

    ready: list[str] = []
    with anyio.fail_after(5), pytest.raises(ConfigurationError, match=re.escape(says)):
        await serve_mcp(
            network, **{"transport": "http", "port": 0, **options}, on_ready=ready.append
        )
    assert ready == []


def test_agent_network_mcp_refuses_a_bad_max_runs(capsys: Any, quiet_logs: None) -> None:
    from network.cli.main import main

    status = main(["mcp", "tests/network/cli/example_network.py:network", "--max-runs", "0"])
    captured = capsys.readouterr()
    assert status == 2
    assert "--max-runs: max_runs must be" in captured.err and "Traceback" not in captured.err
    # no upper bound: a typo's million was taken
    status = main(["mcp", "tests/network/cli/example_network.py:network", "--max-runs", "1000000"])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.err == "error: --max-runs must be at most 10,000, got 1,000,000\n"


async def test_agent_network_mcp_max_runs_bounds_the_stdio_server() -> None:
    # one run at a time: a second call while the first holds the slot is refused at once
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "network.cli", "mcp", TEAM, "--max-runs", "1"],
        env=command_env(),
        cwd=str(ROOT),
    )
    async with Client(params) as client, anyio.create_task_group() as group:
        first: list[Any] = []

        async def slow() -> None:
            first.append(await client.call_tool("notes_team", {"input": "slow"}))

        group.start_soon(slow)
        with anyio.fail_after(20):
            while True:  # until the slow run holds the slot
                second = await client.call_tool("notes_team", {"input": "quick"})
                if second.is_error:
                    break
                await anyio.sleep(0.05)
        assert second.content[0].text.startswith("refused (server_busy): ")
    assert first and not first[0].is_error
