"""`agent-network mcp` checked by the MCP Inspector's CLI (`mcp-inspector --cli`, v2, pinned in
tests/mcp_interop, run from its node_modules), over stdio and over Streamable HTTP: the tool
lists with valid JSON Schemas, calls return what the output schema says, and failures are
`isError` results that leak no exception text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.processes import node_with
from tests.network.mcp.team import SECRET

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ROOT / "tests" / "mcp_interop"
INSPECTOR = "@modelcontextprotocol/inspector"
SERVE = [sys.executable, "-m", "network.cli", "mcp", "tests/network/mcp/team.py:network"]


TOOL_IS_ERROR = 5  # the Inspector's exit code for a call whose result is `isError`


def inspector(*arguments: str, stderr: list[str] | None = None, exit_code: int = 0) -> Any:
    """What `mcp-inspector --cli <arguments>` prints (JSON), once it exited with `exit_code`;
    what it wrote to stderr is added to `stderr`."""
    node = node_with(INSPECTOR, PACKAGES)
    cli = PACKAGES / "node_modules" / INSPECTOR / "clients" / "launcher" / "build" / "index.js"
    # Its connect timeout (15 s by default) is a wall-clock bound: on a busy machine the served
    # network's start-up passed it. No time is asserted here; the subprocess timeout remains.
    done = subprocess.run(
        [node, str(cli), "--cli", "--connect-timeout", "100000", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == exit_code, done.stderr
    if stderr is not None:
        stderr.append(done.stderr)
    return json.loads(done.stdout) if done.stdout.strip() else None  # (a failure: stderr)


def call_tool(target: list[str], *arguments: str, exit_code: int = 0) -> Any:
    tool_args = [f"--tool-arg={argument}" for argument in arguments]
    method = ["--method", "tools/call", "--tool-name", "notes_team"]
    return inspector(*target, *method, *tool_args, exit_code=exit_code)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """`agent-network mcp ... --transport http --port 0`: its endpoint, for the module."""
    process = subprocess.Popen(
        [*SERVE, "--transport", "http", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "over MCP at http://127.0.0.1:" in line, line
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(10)


def test_the_inspector_lists_one_tool_with_valid_portable_json_schemas(url: str) -> None:
    told: list[str] = []
    listing = inspector(
        url, "--transport", "http", "--method", "tools/list", "--strict", stderr=told
    )
    (listed,) = listing["tools"]
    # `--strict` reports schema portability problems (exit 6 on an error); none, not even a
    # warning but the interrupt's `arguments`, which are whatever the model sent
    assert "0 errors, 1 warning across 1 tool." in told[0], told[0]
    assert "interrupts.items.properties.arguments" in told[0]
    assert listed["name"] == "notes_team"
    assert listed["description"].endswith("Agents: writer: Notes the request and answers it.")
    assert listed["inputSchema"]["type"] == "object"
    assert listed["inputSchema"]["required"] == ["input"]
    from jsonschema import Draft202012Validator  # here: not in every worker's collection

    Draft202012Validator.check_schema(listed["inputSchema"])
    Draft202012Validator.check_schema(listed["outputSchema"])


@pytest.mark.parametrize(
    ("method", "key"),
    [
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
    ],
)
def test_what_the_server_does_not_serve_the_inspector_lists_as_nothing(
    url: str, method: str, key: str
) -> None:
    # the server offers tools only (no resources, no prompts capability): the Inspector
    # shows an empty listing, not a failure
    assert inspector(url, "--transport", "http", "--method", method) == {key: []}


@pytest.mark.parametrize(
    ("arguments", "told"),
    [
        (["--method", "resources/read", "--uri", "notes://x"], "Method not found"),
        (["--method", "prompts/get", "--prompt-name", "x"], "Method not found"),
        (["--method", "logging/setLevel", "--log-level", "debug"], "does not support logging"),
    ],
)
def test_what_the_server_does_not_serve_the_inspector_is_told_it_does_not(
    url: str, arguments: list[str], told: str
) -> None:
    """A resource read or a prompt is answered -32601 (method not found), as docs/mcp.md
    says; the Inspector refuses `logging/setLevel` itself, the server declaring no logging."""
    stderr: list[str] = []
    assert inspector(url, *arguments, stderr=stderr, exit_code=1) is None
    assert told in stderr[0], stderr[0]


def test_the_inspector_runs_the_network_over_http(url: str) -> None:
    schema = inspector(url, "--method", "tools/list")["tools"][0]["outputSchema"]
    answer = call_tool([url], "input=buy milk", 'state={"user": "ada"}')
    assert answer["isError"] is False
    assert answer["content"] == [{"type": "text", "text": "done: buy milk"}]
    assert answer["structuredContent"]["state"] == {
        "notes": ["buy milk"],
        "answer": "done: buy milk",
        "user": "ada",
    }
    from jsonschema import Draft202012Validator

    Draft202012Validator(schema).validate(answer["structuredContent"])


@pytest.mark.parametrize(
    ("arguments", "told"),
    [
        (["input=explode"], "run of network 'notes team' failed: ModelError: the provider is down"),
        (["text=hi"], "invalid arguments: input: Field required; text: Extra inputs are not "),
        (["input=hi", 'state={"notes": 5}'], "failed: StateValidationError: state key 'notes' "),
    ],
)
def test_refusals_and_failures_reach_the_inspector_as_error_results(
    url: str, arguments: list[str], told: str
) -> None:
    answer = call_tool([url], *arguments, exit_code=TOOL_IS_ERROR)
    assert answer["isError"] is True
    assert told in answer["content"][0]["text"]
    assert "structuredContent" not in answer


def test_an_unexpected_exception_leaks_nothing_to_the_inspector(url: str) -> None:
    answer = call_tool([url], "input=leak", exit_code=TOOL_IS_ERROR)
    text = answer["content"][0]["text"]
    assert answer["isError"] is True
    assert text.startswith("run of network 'notes team' failed: internal error (reference err_")
    assert SECRET not in text and "postgres" not in text and "Traceback" not in text


def test_the_inspector_runs_the_network_over_stdio() -> None:
    answer = call_tool(SERVE, "input=over stdio")
    assert answer["isError"] is False
    assert answer["structuredContent"]["output"] == "done: over stdio"
    assert answer["structuredContent"]["stop_reason"] == "router_finished"
