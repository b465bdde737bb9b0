"""`network.mcp.bad_lines`: over stdio, `agent-network mcp` answers a line that is not one
JSON-RPC message with the error JSON-RPC 2.0 asks for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

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
