"""A message the SDK cannot read (`hostile_server.py`, a real process over stdio or Streamable
HTTP): a call or listing waiting for its answer ends at once, an error naming the server and
the kind of fault, never quoting the message; with none waiting, it is a warning.

Over stdio the SDK drops such a line unread (it cannot tell which request it answered): each
call waited for its whole `timeout`. Over HTTP the SDK answered the call itself, with pydantic's
text quoting the server's message.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from agents import Agent, MCPServer, MCPServerError, ScriptedModel, call
from agents.capabilities.mcp._unreadable import MAX_OTHER, unreadable_reason

HOSTILE = Path(__file__).with_name("hostile_server.py")
HOSTILE_HTTP = Path(__file__).with_name("hostile_http.py")
TIMEOUT = 30.0  # each call's and each listing's: none of them comes near it
PROMPT = 5.0  # seconds a failed call may take, on a loaded machine

FAULTS = [
    # 10,000 levels of structuredContent: "Invalid JSON: recursion limit exceeded"
    ("unreadable-deep", "invalid JSON: recursion limit exceeded at line 1 column "),
    ("unreadable-text", "invalid JSON: expected value at line 1 column 1)"),
    # `"result": "deep"`: JSON-RPC allows any result, MCP an object
    (
        "unreadable-rpc",
        "not a valid JSON-RPC message: JSONRPCRequest.method: Field required; "
        "JSONRPCNotification.method: Field required; JSONRPCResponse.result: Input should be "
        "an object and 1 more)",
    ),
]

MODES = [mode for mode, _ in FAULTS]

pytestmark = pytest.mark.anyio


def hostile(mode: str) -> MCPServer:
    return MCPServer.stdio(
        sys.executable, [str(HOSTILE), mode], timeout=TIMEOUT, connect_timeout=TIMEOUT
    )


@contextmanager
def hostile_http(mode: str, answers: str) -> Iterator[MCPServer]:
    """The hostile server over Streamable HTTP, its `answers` JSON bodies or SSE events."""
    process = subprocess.Popen(
        [sys.executable, str(HOSTILE_HTTP), mode, answers], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        url = f"http://127.0.0.1:{port}/mcp"
        yield MCPServer.http(url, name="hostile", timeout=TIMEOUT, connect_timeout=TIMEOUT)
    finally:
        process.terminate()
        process.wait(10)


def records(result: Any) -> list[Any]:
    return [record for step in result.state.results for record in step.tool_calls]


async def fails_at_once_and_goes_on(server: MCPServer, why: str) -> None:
    model = ScriptedModel([call("deep"), call("fine"), "done"])
    with anyio.fail_after(TIMEOUT - 5):  # over stdio on main: the call waited its 30 s
        result = await Agent("a", tools=[server], model=model).run("x")
    failed, fine = records(result)
    assert failed.error is not None and failed.error.startswith(
        "tool 'deep' failed: MCP server 'hostile' sent a message that cannot be read while "
        f"the call waited for its answer ({why}"
    ), failed.error
    assert len(failed.error) < 400  # the server's junk is not quoted
    assert "input_value" not in failed.error and "Traceback" not in failed.error
    assert failed.duration_ms < PROMPT * 1000, failed.duration_ms
    # the session goes on: the next call is answered
    assert not fine.is_error and fine.result == "fine", fine.error
    assert result.output == "done"


@pytest.mark.parametrize(("mode", "why"), FAULTS, ids=MODES)
async def test_a_call_answered_with_what_cannot_be_read_fails_at_once(mode: str, why: str) -> None:
    await fails_at_once_and_goes_on(hostile(mode), why)


@pytest.mark.parametrize("answers", ["http", "sse"])
@pytest.mark.parametrize(("mode", "why"), FAULTS, ids=MODES)
async def test_over_http_the_same_error_without_the_sdks_quote(
    mode: str, why: str, answers: str
) -> None:
    # it read "failed: MCPError: Failed to parse JSON response: 1 validation error for
    # union[...]\n  Invalid JSON: ... [type=json_invalid, input_value=b'...', ...]\n    For
    # further information visit https://errors.pydantic.dev/..."
    with hostile_http(mode, answers) as server:
        await fails_at_once_and_goes_on(server, why)


async def test_over_stdio_every_call_waiting_ends_since_which_was_answered_is_unknown() -> None:
    # `hang` is never answered: it waited its 30 s
    model = ScriptedModel([[call("hang"), call("deep")], "done"])
    with anyio.fail_after(TIMEOUT - 5):
        result = await Agent("a", tools=[hostile("unreadable-text")], model=model).run("x")
    hang, deep = records(result)
    for record in (hang, deep):
        assert record.error == (
            f"tool {record.name!r} failed: MCP server 'hostile' sent a message that cannot be "
            "read while the call waited for its answer (invalid JSON: expected value at line 1 "
            "column 1)"
        )
        assert record.duration_ms < PROMPT * 1000, record.duration_ms


async def test_over_stdio_a_parse_error_in_the_sdks_words_is_the_servers_own() -> None:
    # over HTTP the SDK answers a request it cannot read the answer of with such an error; over
    # stdio only the server can send one, and the model reads it as the server's
    model = ScriptedModel([call("deep"), "done"])
    result = await Agent("a", tools=[hostile("unreadable-forged")], model=model).run("x")
    (record,) = records(result)
    assert record.error == (
        "tool 'deep' failed: MCP server 'hostile' failed: MCPError: Failed to parse JSON "
        "response: x\n  Invalid JSON: forged [type=json_invalid"
    )


def test_an_error_other_than_the_parsers_is_cut() -> None:
    # the SDK's transports give pydantic's errors; another's text is the server's, maybe long
    why = unreadable_reason(RuntimeError("x" * 100_000))
    assert why == f"RuntimeError: {'x' * (MAX_OTHER - len('RuntimeError: '))}..."


async def test_a_listing_answered_with_what_cannot_be_read_fails_at_once() -> None:
    agent = Agent("a", tools=[hostile("unreadable-list")], model=ScriptedModel(["no"]))
    with anyio.fail_after(TIMEOUT - 5), pytest.raises(MCPServerError) as raised:
        await agent.run("x")  # on main: "no answer within connect_timeout=30 s", at 30 s
    assert str(raised.value) == (
        "MCP server 'hostile': listing its tools failed: it sent a message that cannot be read "
        "while the listing waited for its answer (invalid JSON: expected ident at line 1 "
        "column 2)"  # "this is not JSON": a `true` that went wrong
    )
    assert raised.value.server == "hostile"


async def test_over_http_what_cannot_be_read_on_the_get_stream_ends_no_call() -> None:
    # a call's answer comes in its own response: junk on the stream of the server's own
    # messages, while `slow` waits, is not its answer
    model = ScriptedModel([call("slow"), "done"])
    with hostile_http("unreadable-get", "http") as server, capture_logs() as logs:
        result = await Agent("a", tools=[server], model=model).run("x")
    (record,) = records(result)
    assert record.result == "slow", record.error
    (warning,) = [log for log in logs if log["event"] == "mcp_unreadable_message"]
    assert warning["server"] == "hostile" and warning["requests_ended"] == 0
    assert warning["why"] == "invalid JSON: expected ident at line 1 column 2"


async def test_a_line_that_cannot_be_read_with_nothing_waiting_is_a_warning() -> None:
    # a server that writes a banner on its stdout (MCP forbids it): nothing is failed by it
    model = ScriptedModel([call("deep"), "done"])
    with capture_logs() as logs, anyio.fail_after(TIMEOUT - 5):
        result = await Agent("a", tools=[hostile("banner")], model=model).run("x")
    (record,) = records(result)
    assert record.result == "deep", record.error
    (warning,) = [log for log in logs if log["event"] == "mcp_unreadable_message"]
    assert warning["log_level"] == "warning"
    # read before the server named itself in the handshake: it is named by its command
    assert warning["server"] == sys.executable
    assert warning["requests_ended"] == 0
    assert warning["why"] == "invalid JSON: expected value at line 1 column 1"
