"""An agent uses the MCP reference servers from npm, as docs/mcp.md shows: the filesystem
server and the "everything" server, over stdio and over Streamable HTTP (pinned in
tests/mcp_interop, run from its node_modules: nothing is downloaded at test time)."""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents import Agent, MCPServer, ScriptedModel, call, tool
from tests.fakes.processes import free_port, node_with

pytestmark = pytest.mark.anyio

PACKAGES = Path(__file__).resolve().parents[3] / "mcp_interop"
EVERYTHING = "@modelcontextprotocol/server-everything"
FILESYSTEM = "@modelcontextprotocol/server-filesystem"
INVALID = "a: 'two' is not of type 'number'"


def server_script(package: str) -> list[str]:
    """`node <the package's bin>`: the command `npx -y <package>` would run."""
    node = node_with(package, PACKAGES)
    return [node, str(PACKAGES / "node_modules" / package / "dist" / "index.js")]


def offered(model: ScriptedModel) -> set[str]:
    return {spec["function"]["name"] for spec in model.requests[0].tools or []}


def records(result: Any) -> dict[str, Any]:
    """The run's tool call records, by the name the model called."""
    return {r.name: r for step in result.state.results for r in step.tool_calls}


@tool
def echo(message: str) -> str:
    """A local tool with the same name as the everything server's."""
    return f"local {message}"


@tool
def read_file(path: str) -> str:
    """A local tool with the same name as the filesystem server's."""
    return f"local {path}"


async def test_the_everything_server_over_stdio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OUR_DATABASE_PASSWORD", "hunter2")  # of this process: not the server's
    node, script = server_script(EVERYTHING)
    everything = MCPServer.stdio(node, [script, "stdio"], timeout=30, env={"GREETING": "hi"})
    model = ScriptedModel(
        [
            [
                call("echo", message="mine"),
                call("mcp-servers_everything__echo", message="hello"),
                call("get-sum", a=2, b=3),
                call("get-sum", a="two", b=3),
                call("get-tiny-image"),
                call("get-structured-content", location="New York"),
                call("get-resource-reference", resourceType="Text", resourceId=1),
                call("get-resource-links", count=2),
                call("trigger-long-running-operation", duration=0.4, steps=2),
                call("get-env"),
            ],
            "done",
        ]
    )
    events: list[Any] = []  # a live sink: calls carry a progress token
    agent = Agent("a", tools=[echo, everything], model=model)
    result = await agent.run("try everything", sinks=[events.append])
    assert result.output == "done"
    # the name docs/mcp.md promises for a server calling itself `mcp-servers/everything`
    assert {"echo", "mcp-servers_everything__echo", "get-sum", "get-tiny-image"} <= offered(model)
    # a tool that must be called as a task (the library makes plain calls) is not offered:
    # every call of it would fail
    assert "simulate-research-query" not in offered(model)
    # the client declares no sampling, elicitation or roots: the server lists no tool of them
    asking = {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"}
    assert not asking & offered(model)
    calls = records(result)
    errors = {name: r.error for name, r in calls.items() if r.is_error}
    # the later get-sum: refused before sending, naming the problem
    assert errors == {"get-sum": f"tool 'get-sum': invalid arguments: {INVALID}"}
    assert calls["echo"].result == "local mine"
    assert calls["mcp-servers_everything__echo"].result == "Echo: hello"
    image = calls["get-tiny-image"].result
    assert image[0] == "Here's the image you requested:"
    assert image[1].startswith("data:image/png;base64,")
    assert base64.b64decode(image[1].split(",", 1)[1]).startswith(b"\x89PNG")
    assert set(calls["get-structured-content"].result) == {"temperature", "conditions", "humidity"}
    assert "demo://resource/dynamic/text/1" in calls["get-resource-reference"].result[-1]
    links = calls["get-resource-links"].result
    assert links[1:] == ["demo://resource/dynamic/blob/1", "demo://resource/dynamic/text/2"]
    assert calls["trigger-long-running-operation"].result.startswith(
        "Long running operation completed."
    )
    # its steps reach the sink over stdio too, as TOOL_CALL_PROGRESS of that call (a step
    # the sink had not read when the next came may be replaced by it: the latest is sent)
    progress = [e.value for e in events if e.type.value == "CUSTOM"]
    assert [(p["progress"], p["total"]) for p in progress][-1] == (2, 2)
    assert {p["toolCallId"] for p in progress} == {calls["trigger-long-running-operation"].id}
    # `env` is added to a small safe environment, not to the whole of this process's
    environment = calls["get-env"].result
    assert environment["GREETING"] == "hi" and "PATH" in environment
    assert "OUR_DATABASE_PASSWORD" not in environment
    # what the model reads back: the tool messages of its next request
    read = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert "Echo: hello" in read and "The sum of 2 and 3 is 5." in read


async def test_the_filesystem_server_as_the_docs_start_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("milk\n")
    (tmp_path / "secret.txt").write_text("outside the root")
    node, script = server_script(FILESYSTEM)
    files = MCPServer.stdio(
        node, [script, "./project"], outputs_to_state={"write_file": {"written": {}}}
    )
    model = ScriptedModel(
        [
            [
                call("read_text_file", path="notes.txt"),
                call("write_file", path="calc.py", content="def add(a, b):\n    return a + b\n"),
                call("read_text_file", path=str(tmp_path / "secret.txt")),
                call("list_directory", path="no-such-folder"),
            ],
            "done",
        ]
    )
    result = await Agent("coder", tools=[read_file, files], model=model).run("write calc.py")
    calls = records(result)
    # the server's read_file, renamed after the name the server gives itself
    assert {"read_file", "secure-filesystem-server__read_file", "write_file"} <= offered(model)
    assert calls["read_text_file"].is_error  # the later call of that name: outside the root
    assert "Access denied" in calls["read_text_file"].error
    assert "outside the root" not in str(result.state.results)
    assert calls["list_directory"].is_error and "ENOENT" in calls["list_directory"].error
    assert calls["write_file"].result == {"content": "Successfully wrote to calc.py"}
    assert result.state.kv.get("written") == {"content": "Successfully wrote to calc.py"}
    assert (tmp_path / "project" / "calc.py").read_text().startswith("def add")
    read = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert '{"content": "milk\\n"}' in read
    assert result.output == "done"


@pytest.fixture(scope="module")
def everything_over_http() -> Iterator[str]:
    """The everything server's Streamable HTTP mode on a loopback port; its /mcp URL."""
    node, script = server_script(EVERYTHING)
    port = free_port()
    process = subprocess.Popen(
        [node, script, "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        for line in process.stderr:  # it says so on stderr once it listens
            if f"listening on port {port}" in line:
                break
        else:
            pytest.fail(f"the everything server did not start: exit {process.wait(10)}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


async def test_the_everything_server_over_streamable_http(everything_over_http: str) -> None:
    everything = MCPServer.http(everything_over_http, name="everything")
    model = ScriptedModel([[call("echo", message="over http"), call("get-sum", a=20, b=22)], "42"])
    async with everything:  # one session, two runs
        first = await Agent("a", tools=[everything], model=model).run("x")
        second = await Agent("a", tools=[everything], model=ScriptedModel(["ok"])).run("y")
    calls = records(first)
    assert calls["echo"].result == "Echo: over http"
    assert calls["get-sum"].result == "The sum of 20 and 22 is 42."
    assert second.output == "ok"


async def test_the_everything_servers_progress_reaches_a_live_sink(
    everything_over_http: str,
) -> None:
    """Given a progress token, the long-running tool reports each step: each reaches the
    run's sink as a TOOL_CALL_PROGRESS event of the call, before its result."""
    everything = MCPServer.http(everything_over_http, name="everything")
    model = ScriptedModel([call("trigger-long-running-operation", duration=0.6, steps=3), "ok"])
    events: list[Any] = []
    result = await Agent("a", tools=[everything], model=model).run("x", sinks=[events.append])
    (record,) = records(result).values()
    assert record.result.startswith("Long running operation completed.")
    progress = [e.value for e in events if e.type.value == "CUSTOM"]
    assert [(p["progress"], p["total"]) for p in progress] == [(1, 3), (2, 3), (3, 3)]
    assert {(p["toolCallId"], p["tool"], p["server"]) for p in progress} == {
        (record.id, "trigger-long-running-operation", "everything")
    }
    kinds = [e.type.value for e in events]
    assert kinds.index("TOOL_CALL_RESULT") > max(i for i, k in enumerate(kinds) if k == "CUSTOM")
