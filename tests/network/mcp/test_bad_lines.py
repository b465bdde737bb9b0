"""`network.mcp.bad_lines`: over stdio, `agent-network mcp` answers a line that is not one
JSON-RPC message with the error JSON-RPC 2.0 asks for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from tests.network.mcp.test_serve import ROOT, TEAM, command_env


def test_over_stdio_a_line_that_is_no_message_is_answered_with_a_json_rpc_error() -> None:
    """Garbage, a batch (MCP has none) and a message of another JSON-RPC version each get
    the error JSON-RPC 2.0 asks for, with a null id; the session goes on. Before, the SDK
    dropped them: the client waited for an answer that never came."""
    process = subprocess.Popen(
        [sys.executable, "-m", "network.cli", "mcp", TEAM],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env={**os.environ, **command_env()},
    )
    assert process.stdin is not None and process.stdout is not None
    client = {"name": "raw", "version": "1"}
    opening = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": opening},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "{not json",
        [{"jsonrpc": "2.0", "id": 2, "method": "ping"}],
        {"jsonrpc": "1.0", "id": 3, "method": "ping"},
        # JSON, nested past the parser: it read 'the line is not JSON'
        '{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": '
        + "[" * 300
        + "]" * 300
        + "}}",
        {"jsonrpc": "2.0", "id": 4, "method": "ping"},
    ]
    deadline = threading.Timer(60, process.kill)  # an answer never sent ends the reading
    deadline.start()
    try:
        for line in lines:
            text = line if isinstance(line, str) else json.dumps(line)
            process.stdin.write(text.encode() + b"\n")
        process.stdin.flush()
        answers = []
        while len(answers) < 6 and (answer := process.stdout.readline()):
            answers.append(json.loads(answer))
    finally:
        deadline.cancel()
        process.kill()
        process.wait(10)
    assert len(answers) == 6, answers
    assert answers[0]["id"] == 1 and "result" in answers[0]
    parse, batch, version = (answer["error"] for answer in answers[1:4])
    assert [a["id"] for a in answers[1:4]] == [None, None, None]
    assert parse == {"code": -32700, "message": "Parse error: the line is not JSON"}
    invalid = "Invalid Request: not one JSON-RPC 2.0 message (batches are not supported)"
    assert batch == version == {"code": -32600, "message": invalid}
    deep = "Parse error: the line nests deeper than the 200 levels read"
    assert answers[4] == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": deep}}
    assert answers[5] == {"jsonrpc": "2.0", "id": 4, "result": {}}


def test_over_stdio_a_request_whose_id_mcp_cannot_use_is_answered_with_a_null_id() -> None:
    """A request whose `id` is null, a fraction, a bool, an object or an array is answered
    `-32600` with a null id, naming the kind of id (never its value); a notification (no `id`)
    gets no answer; odd ids MCP allows (huge, negative, strings with quotes, control
    characters or nothing) are answered with the id as sent. Before, the SDK read the bad ones
    as notifications and the client waited for ever."""
    process = subprocess.Popen(
        [sys.executable, "-m", "network.cli", "mcp", TEAM],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env={**os.environ, **command_env()},
    )
    assert process.stdin is not None and process.stdout is not None
    client = {"name": "raw", "version": "1"}
    opening = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
    bad = {"null": None, "fraction": 1.5, "bool": True, "object": {"a": 1}, "array": [1]}
    good: list[object] = [10**30, -5, 'a"\u0000\n\u2028b', ""]
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": opening},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": ident, "method": "tools/list"} for ident in bad.values()),
        '{"jsonrpc": "2.0", "id": 1.0, "method": "ping"}',  # written with a fraction
        '{"jsonrpc": "2.0", "id": 7, "method": "ping", "id": null}',  # the last one counts
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
        *({"jsonrpc": "2.0", "id": ident, "method": "ping"} for ident in good),
    ]
    deadline = threading.Timer(60, process.kill)  # an answer never sent ends the reading
    deadline.start()
    try:
        for line in lines:
            text = line if isinstance(line, str) else json.dumps(line)
            process.stdin.write(text.encode() + b"\n")
        process.stdin.flush()
        answers = []
        while len(answers) < 12 and (answer := process.stdout.readline()):
            answers.append(json.loads(answer))
        # stdin is read through the library's reader, claimed as the SDK claims it: fd 0 is
        # the null device while it serves, so a tool or a child reading stdin takes nothing
        # of the client's messages
        stdin = Path(f"/proc/{process.pid}/fd/0")
        assert not stdin.parent.exists() or os.readlink(stdin) == os.devnull
    finally:
        deadline.cancel()
        process.kill()
        process.wait(10)
    assert len(answers) == 12, answers
    kinds = ["null", "a number with a fraction or an exponent", "a boolean", "an object"]
    kinds += ["an array", "a number with a fraction or an exponent", "null"]
    for answer, kind in zip(answers[1:8], kinds, strict=True):
        message = f"Invalid Request: the id must be a string or an integer, got {kind}"
        error = {"code": -32600, "message": message}
        assert answer == {"jsonrpc": "2.0", "id": None, "error": error}
    assert answers[8:] == [{"jsonrpc": "2.0", "id": ident, "result": {}} for ident in good]
