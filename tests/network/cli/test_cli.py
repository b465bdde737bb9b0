"""`agent-network`: run, serve and graph, driven as a user would, through subprocesses."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.fakes import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = "tests/network/cli/example_network.py"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "network.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **(env or {})},
    )


def test_the_entry_point_is_declared() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'agent-network = "network.cli.main:main"' in text


def test_run_prints_a_live_trace_and_a_summary() -> None:
    done = cli("run", f"{EXAMPLE}:network", "add two numbers")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    expected = [
        "> planner",
        "planner: Plan: write add.py",
        "state add /plan",
        "< planner",
        "> coder",
        'tool write_files({"files": {"add.py": "def add(a, b): ..."}})',
        "= write_files:",
        "state add /files",
        "< coder",
        "-- summary --",
    ]
    positions = [out.index(line) for line in expected]
    assert positions == sorted(positions), out
    assert "stop reason router_finished" in out
    assert "agent calls 2 (planner -> coder)" in out
    assert "tokens" in out and "time" in out
    assert done.stderr == ""


def test_the_trace_shows_the_routing_agents_choice_reason_and_summary() -> None:
    done = cli("run", f"{EXAMPLE}:routed", "add two numbers")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    expected = [
        "router router chose planner: a plan comes first",
        "> planner",
        "router router is done",
        "-- summary --",
        "stop reason router_done",
        "summary     Planned the work.",
        "output      Plan: write add.py",
    ]
    positions = [out.index(line) for line in expected]
    assert positions == sorted(positions), out


def test_run_takes_a_function_and_initial_state() -> None:
    done = cli("run", f"{EXAMPLE}:make_network", "go", "--state", '{"files": {"a.py": ""}}')
    assert done.returncode == 0, done.stderr
    assert "snapshot: files" in done.stdout


def test_model_overrides_every_agent_for_the_run() -> None:
    with FakeOpenAIServer() as server:
        server.add_text("from the fake provider")
        env = {"OPENAI_API_BASE": server.base_url, "OPENAI_API_KEY": "test-key"}
        done = cli("run", f"{EXAMPLE}:solo", "hello", "--model", "openai/fake-model", env=env)
        assert done.returncode == 0, done.stderr
        assert "from the fake provider" in done.stdout
        assert "scripted answer" not in done.stdout
        (request,) = server.requests
        assert request["model"] == "fake-model"


def test_graph_prints_the_mermaid_diagram() -> None:
    done = cli("graph", f"{EXAMPLE}:network")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("flowchart")
    assert "planner" in done.stdout and "coder" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "nowhere.py:network", "x"], "error: no such file: nowhere.py"),
        (["run", f"{EXAMPLE}:missing", "x"], "has no attribute 'missing' (networks in it:"),
        (["graph", f"{EXAMPLE}:not_a_network"], "is a int, not a Network"),
        (["graph", f"{EXAMPLE}:needs_arguments"], "must take no arguments"),
        (["graph", "tests/network/cli/bad_import.py:network"], "RuntimeError: this file is broken"),
        (["run", f"{EXAMPLE}:network", "x", "--state", "[1]"], "--state must be a JSON object"),
        (["graph", "pyproject.toml:network"], "is not a Python file"),
    ],
)
def test_bad_targets_get_one_clear_line(args: list[str], message: str) -> None:
    done = cli(*args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_a_failing_run_exits_1_with_one_line() -> None:
    done = cli("run", f"{EXAMPLE}:broken", "x")
    assert done.returncode == 1
    assert done.stderr.strip() == "error: run failed: RuntimeError: provider down"
    assert "run failed: RuntimeError: provider down" in done.stdout  # the trace's RUN_ERROR


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_answers_agui_requests() -> None:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "network.cli", "serve", f"{EXAMPLE}:network", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/"
        body = {
            "threadId": "t",
            "runId": "r",
            "messages": [{"id": "1", "role": "user", "content": "go"}],
        }
        deadline = time.monotonic() + 20
        while True:
            try:
                response = httpx.post(url, json=body, timeout=10)
                break
            except httpx.ConnectError:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        frames = [json.loads(f[len("data: ") :]) for f in response.text.split("\n\n") if f]
        assert frames[0]["type"] == "RUN_STARTED" and frames[0]["runId"] == "r"
        assert frames[-1]["type"] == "RUN_FINISHED"
    finally:
        process.terminate()
        process.communicate(timeout=10)


def test_model_overrides_every_agent_of_a_team() -> None:
    draft = {"calc/add.py": "def add(a, b):\n    return a + b\n"}
    with FakeOpenAIServer() as server:
        server.add_text("1. calc/add.py")
        server.add_tool_calls(("write_files", {"files": draft}))
        server.add_tool_calls(("review", {"approved": True, "comments": "ok"}))
        env = {"OPENAI_API_BASE": server.base_url, "OPENAI_API_KEY": "test-key"}
        done = cli("run", "examples/codegen.py:network", "add", "--model", "openai/m", env=env)
        assert done.returncode == 0, done.stderr
        assert "planner -> coder -> reviewer" in done.stdout
        assert [r["model"] for r in server.requests] == ["m", "m", "m"]
        tool_choices = [r.get("tool_choice") for r in server.requests]
        assert tool_choices[1:] == [
            {"type": "function", "function": {"name": "write_files"}},
            {"type": "function", "function": {"name": "review"}},
        ]
