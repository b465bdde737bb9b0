"""`agent-network`: run, serve and graph, driven as a user would.

The entry point itself (`python -m network.cli`: exit statuses, nothing on stderr, no key
printed anywhere, logs included) is driven through subprocesses; what the commands print
is checked by calling the same `main(argv)` in this process, which spares each case a new
interpreter importing the library.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from subprocess import Popen
from unittest import mock

import httpx
import pytest
import structlog

from network.cli.load import load_network
from network.cli.main import main
from tests.fakes import FakeOpenAIServer
from tests.fakes.processes import free_port, server_process
from tests.network.cli.dev_process import announced_server

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = "tests/network/cli/example_network.py"


TERMINAL = {"NO_COLOR": "1", "COLUMNS": "200"}


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m network.cli ARGS` as a process of its own: its status and all it prints."""
    return subprocess.run(
        [sys.executable, "-m", "network.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **TERMINAL, **(env or {})},
    )


def cli_main(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`main(ARGS)`, the function the entry point calls, in this process with `env` set: the
    status it returns (or exits with, as argparse does) and what it writes to stdout and
    stderr. Left as it was after: the environment, the working directory, `sys.path` and
    `sys.modules` (a loaded FILE), and structlog (which `run` configures)."""
    out, err = io.StringIO(), io.StringIO()
    path, modules, cwd = list(sys.path), set(sys.modules), Path.cwd()
    try:
        os.chdir(ROOT)
        environment = mock.patch.dict(os.environ, {**TERMINAL, **(env or {})})
        with environment, redirect_stdout(out), redirect_stderr(err):
            try:
                status = main(list(args))
            except SystemExit as exited:
                status = exited.code if isinstance(exited.code, int) else 1
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            if name.startswith("_agent_network_cli_"):
                del sys.modules[name]
        structlog.reset_defaults()
    return subprocess.CompletedProcess(
        ["agent-network", *args], status, out.getvalue(), err.getvalue()
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
    done = cli_main("run", f"{EXAMPLE}:routed", "add two numbers")
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


def test_the_trace_shows_what_models_and_tools_say_as_text_not_terminal_codes() -> None:
    """An escape sequence in a tool's result drove the terminal, and a lone surrogate (a file
    name that is not UTF-8) could not be written to stdout: two tracebacks ended the run."""
    done = cli_main("run", f"{EXAMPLE}:hostile", "read it")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "= fetch_page: page \\x1b[2J\\x1b]0;owned\\x1b\\ \\x9b31m name-\\udcff" in out
    assert "reader: done\\x1b[K \\u202eevil\\udcff\nnext" in out  # the line break kept
    assert "output      done\\x1b[K \\u202eevil\\udcff next" in out
    unsafe = [c for c in out if c != "\n" and (ord(c) < 32 or 0x7F <= ord(c) <= 0x9F)]
    assert unsafe == [] and not any(0xD800 <= ord(c) <= 0xDFFF for c in out)
    assert "\u202e" not in out


def test_run_takes_a_function_and_initial_state() -> None:
    done = cli_main("run", f"{EXAMPLE}:make_network", "go", "--state", '{"files": {"a.py": ""}}')
    assert done.returncode == 0, done.stderr
    assert "snapshot: files" in done.stdout


def test_model_overrides_every_agent_for_the_run() -> None:
    with FakeOpenAIServer() as server:
        server.add_text("from the fake provider")
        env = {"OPENAI_API_BASE": server.base_url, "OPENAI_API_KEY": "test-key"}
        done = cli_main("run", f"{EXAMPLE}:solo", "hello", "--model", "openai/fake-model", env=env)
        assert done.returncode == 0, done.stderr
        assert "from the fake provider" in done.stdout
        assert "scripted answer" not in done.stdout
        (request,) = server.requests
        assert request["model"] == "fake-model"


def test_loading_a_file_again_puts_its_directory_on_the_path_once() -> None:
    # `dev --reload` loads the file on every change: the path grew by one entry each time
    path = list(sys.path)
    try:
        for _ in range(3):
            load_network(f"{ROOT}/{EXAMPLE}:network")
        directory = str((ROOT / EXAMPLE).parent)
        assert sys.path[0] == directory and sys.path.count(directory) == 1
    finally:
        sys.path[:] = path


def test_graph_prints_the_mermaid_diagram() -> None:
    done = cli_main("graph", f"{EXAMPLE}:network")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("flowchart")
    assert "planner" in done.stdout and "coder" in done.stdout


def test_graph_draws_handoff_edges() -> None:
    done = cli_main("graph", "tests/agents/airline.py:network")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert '    triage -->|"handoff"| FAQ_Agent' in lines
    assert '    seat_booking -->|"handoff"| triage' in lines
    assert not any("-.->" in line for line in lines)  # no router reaching every agent


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "nowhere.py:network", "x"], "error: no such file: nowhere.py"),
        (["run", f"{EXAMPLE}:missing", "x"], "has no attribute 'missing' (networks in it:"),
        (["graph", f"{EXAMPLE}:not_a_network"], "is a int, not a Network"),
        (["graph", f"{EXAMPLE}:needs_arguments"], "must take no arguments"),
        (["graph", f"{EXAMPLE}:built_asynchronously"], "is an async function: name the Network"),
        (
            ["graph", f"{EXAMPLE}:fails_with_type_error"],
            "fails_with_type_error() failed: TypeError: unsupported operand",
        ),
        (["graph", "tests/network/cli/bad_import.py:network"], "RuntimeError: this file is broken"),
        (["run", f"{EXAMPLE}:network", "x", "--state", "[1]"], "--state must be a JSON object"),
        (["run", f"{EXAMPLE}:network", "x", "--state", '{"n": NaN}'], "--state: state key 'n'"),
        (
            ["run", f"{EXAMPLE}:network", "x", "--state", '{"files": 5}'],
            "--state: state key 'files'",
        ),
        (["run", f"{EXAMPLE}:network", "\udcff abc"], "input: the run's input holds a lone"),
        (["run", f"{EXAMPLE}:network", "a\x00b"], "input: the run's input holds a NUL"),
        (["graph", "pyproject.toml:network"], "is not a Python file"),
    ],
)
def test_bad_targets_get_one_clear_line(args: list[str], message: str) -> None:
    done = cli_main(*args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_a_failing_run_exits_1_with_one_line() -> None:
    done = cli("run", f"{EXAMPLE}:broken", "x")
    assert done.returncode == 1
    assert done.stderr.strip() == "error: run failed: RuntimeError: provider down"
    assert "run failed: RuntimeError: provider down" in done.stdout  # the trace's RUN_ERROR


@contextmanager
def served(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, Popen[bytes]]]:
    """`agent-network serve ARGS` as a process on a free port: its URL once it answers."""
    port = free_port()
    command = [sys.executable, "-m", "network.cli", "serve", *args, "--port", str(port)]
    url = f"http://127.0.0.1:{port}/"
    with server_process(command, url, ok=None, env=env, name="agent-network serve") as process:
        yield url, process


RUN_BODY = {
    "threadId": "t",
    "runId": "r",
    "messages": [{"id": "1", "role": "user", "content": "go"}],
}


def test_serve_answers_agui_requests() -> None:
    with served(f"{EXAMPLE}:network") as (url, _):
        response = httpx.post(url, json=RUN_BODY, timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    frames = [json.loads(f[len("data: ") :]) for f in response.text.split("\n\n") if f]
    assert frames[0]["type"] == "RUN_STARTED" and frames[0]["runId"] == "r"
    assert frames[-1]["type"] == "RUN_FINISHED"


def test_serve_on_port_0_prints_the_port_it_took_and_answers_there() -> None:
    command = ("serve", f"{EXAMPLE}:network", "--port", "0")
    banner = "Serving 'tiny' over AG-UI at http://127.0.0.1:"
    with announced_server(*command, banner=banner) as (line, _):
        url = line.split(" at ", 1)[1].split(" ", 1)[0]
        assert not url.startswith("http://127.0.0.1:0/")  # the port taken, not the one asked
        response = httpx.post(url, json=RUN_BODY, timeout=10)
    assert response.status_code == 200 and "RUN_FINISHED" in response.text


def test_serve_on_a_port_in_use_is_one_error_line() -> None:
    with served(f"{EXAMPLE}:network") as (url, _):
        port = url.rsplit(":", 1)[1].strip("/")
        done = cli("serve", f"{EXAMPLE}:network", "--port", port)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().startswith(f"error: cannot listen on 127.0.0.1:{port}:")
    assert "Traceback" not in done.stderr


def test_model_overrides_every_agent_of_a_team() -> None:
    draft = {"calc/add.py": "def add(a, b):\n    return a + b\n"}
    with FakeOpenAIServer() as server:
        server.add_text("1. calc/add.py")
        server.add_tool_calls(("write_files", {"files": draft}))
        server.add_tool_calls(("review", {"approved": True, "comments": "ok"}))
        env = {"OPENAI_API_BASE": server.base_url, "OPENAI_API_KEY": "test-key"}
        done = cli_main("run", "examples/codegen.py:network", "add", "--model", "openai/m", env=env)
        assert done.returncode == 0, done.stderr
        assert "planner -> coder -> reviewer" in done.stdout
        assert [r["model"] for r in server.requests] == ["m", "m", "m"]
        tool_choices = [r.get("tool_choice") for r in server.requests]
        assert tool_choices[1:] == [
            {"type": "function", "function": {"name": "write_files"}},
            {"type": "function", "function": {"name": "review"}},
        ]


SECRET = "sk-test-0123456789abcdef"


def _no_provider_env() -> dict[str, str]:
    """The test's environment without provider settings that would hide a missing flag."""
    return {name: "" for name in ("OPENAI_API_BASE", "OPENAI_BASE_URL", "OPENAI_API_KEY")}


def test_endpoint_flags_reach_the_server_and_the_key_is_never_printed() -> None:
    with FakeOpenAIServer() as server:
        server.add_text("answered by the self-hosted model")
        done = cli(
            "run",
            f"{EXAMPLE}:solo",
            "hello",
            "--model",
            "openai/local-model",
            "--api-base",
            server.base_url,
            "--api-key",
            SECRET,
            "--param",
            "temperature=0.25",
            "--param",
            'stop=["END"]',
            "--param",
            "seed=7",
            env=_no_provider_env(),
        )
        assert done.returncode == 0, done.stderr
        assert "answered by the self-hosted model" in done.stdout
        (request,) = server.requests
        (headers,) = server.request_headers
    assert request["model"] == "local-model"
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert request["temperature"] == 0.25
    assert request["stop"] == ["END"]
    assert request["seed"] == 7
    assert SECRET not in done.stdout + done.stderr


def test_endpoint_environment_variables_stand_in_for_the_flags() -> None:
    with FakeOpenAIServer() as server:
        server.add_text("from the environment")
        env = {
            **_no_provider_env(),
            "AGENT_NETWORK_MODEL": "openai/env-model",
            "AGENT_NETWORK_API_BASE": server.base_url,
            "AGENT_NETWORK_API_KEY": SECRET,
            "AGENT_NETWORK_PARAMS": '{"max_tokens": 7, "temperature": 0.9}',
        }
        # a flag wins over its variable, key by key for params
        done = cli("run", f"{EXAMPLE}:solo", "hi", "--param", "temperature=0.1", env=env)
        assert done.returncode == 0, done.stderr
        (request,) = server.requests
        (headers,) = server.request_headers
    assert request["model"] == "env-model"
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert (request["max_tokens"], request["temperature"]) == (7, 0.1)
    assert SECRET not in done.stdout + done.stderr


def test_model_flag_keeps_an_agents_own_endpoint() -> None:
    with FakeOpenAIServer() as server:
        server.add_text("still on the agent's own server")
        env = {**_no_provider_env(), "EXAMPLE_API_BASE": server.base_url}
        done = cli_main("run", f"{EXAMPLE}:remote", "hi", "--model", "openai/other-model", env=env)
        assert done.returncode == 0, done.stderr
        (request,) = server.requests
        (headers,) = server.request_headers
    assert request["model"] == "other-model"
    assert headers["authorization"] == "Bearer key-from-the-file"
    assert request["temperature"] == 0.5  # the agent's own params too


def test_api_base_flag_moves_an_agent_keeping_its_model_name() -> None:
    with FakeOpenAIServer() as server:
        server.add_text("moved")
        done = cli_main(
            "run",
            f"{EXAMPLE}:remote",
            "hi",
            "--api-base",
            server.base_url,
            "--param",
            "temperature=0",
            env=_no_provider_env(),  # EXAMPLE_API_BASE unset: the file's URL is a dead port
        )
        assert done.returncode == 0, done.stderr
        (request,) = server.requests
    assert request["model"] == "own-model"
    assert request["temperature"] == 0


def test_a_provider_error_quoting_the_key_is_printed_redacted() -> None:
    with FakeOpenAIServer() as server:
        server.add_error(401, f"Incorrect API key provided: {SECRET}")
        done = cli(
            "run",
            f"{EXAMPLE}:solo",
            "hi",
            "--model",
            "openai/m",
            "--api-base",
            server.base_url,
            "--api-key",
            SECRET,
            env=_no_provider_env(),
        )
    assert done.returncode == 1
    assert done.stderr.startswith("error: run failed: ModelError"), done.stderr
    assert "Incorrect API key provided: ***" in done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_param_values_are_json_when_they_parse_else_text() -> None:
    from network.cli.endpoint import parse_param

    assert parse_param("temperature=0.2") == ("temperature", 0.2)
    assert parse_param('stop=["a", "b"]') == ("stop", ["a", "b"])
    assert parse_param("user=alice") == ("user", "alice")
    assert parse_param("note=a=b") == ("note", "a=b")


def test_a_param_without_a_value_is_one_clear_line() -> None:
    done = cli("run", f"{EXAMPLE}:solo", "hi", "--param", "temperature")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --param 'temperature' is not KEY=VALUE"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--param", "temperature=NaN"], "parameter 'temperature' must be a finite number"),
        (["--param", "max_tokens=-5"], "parameter 'max_tokens' must be an int >= 1, got -5"),
    ],
)
def test_a_param_no_request_can_carry_is_one_clear_line(given: list[str], said: str) -> None:
    done = cli("run", f"{EXAMPLE}:solo", "hi", "--model", "openai/m", *given)
    assert done.returncode == 2
    assert done.stderr.strip().startswith(f"error: --param: {said}")


@pytest.mark.parametrize(
    ("variable", "said"),
    [
        ('{"temperature": NaN}', "parameter 'temperature' must be a finite number"),
        ('{"max_tokens": -5}', "parameter 'max_tokens' must be an int >= 1, got -5"),
    ],
)
def test_a_bad_param_in_the_environment_names_the_variable(variable: str, said: str) -> None:
    # it was reported as "--param: ...", an option the command was not given
    from network.cli.endpoint import endpoint_from_args
    from network.cli.load import CLIError

    given = argparse.Namespace(param=[])
    with pytest.raises(CLIError) as caught:
        endpoint_from_args(given, environ={"AGENT_NETWORK_PARAMS": variable})
    assert str(caught.value).startswith(f"AGENT_NETWORK_PARAMS: {said}")
    with pytest.raises(CLIError, match=r"^--param: parameter 'max_tokens'"):  # the flag's own
        endpoint_from_args(
            argparse.Namespace(param=["max_tokens=0"]),
            environ={"AGENT_NETWORK_PARAMS": '{"temperature": 0.5}'},
        )


def test_serve_takes_the_endpoint_options() -> None:
    with FakeOpenAIServer() as server:
        server.add_text("served from the self-hosted model")
        options = ("--model", "openai/served", "--api-base", server.base_url)
        secrets = ("--api-key", SECRET, "--param", "temperature=0.3")
        with served(f"{EXAMPLE}:solo", *options, *secrets, env=_no_provider_env()) as (
            url,
            process,
        ):
            response = httpx.post(url, json=RUN_BODY, timeout=60)
        out, err = (text.decode() for text in process.communicate(timeout=10))
        assert "served from the self-hosted model" in response.text
        (request,) = server.requests
        (headers,) = server.request_headers
    assert request["model"] == "served" and request["temperature"] == 0.3
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in out + err


def test_codegen_on_a_text_only_self_hosted_model_ends_with_a_stop_reason() -> None:
    with FakeOpenAIServer() as server:
        for _ in range(2):
            server.add_text("Sure! def add(a, b): return a + b")
        done = cli_main(
            "run",
            "examples/codegen.py:network",
            "add",
            *("--model", "openai/small-local", "--api-base", server.base_url),
            env=_no_provider_env(),
        )
        assert len(server.requests) == 2  # planner, coder: then the router stops
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "stop reason coder_no_tool_call" in done.stdout
    assert "agent calls 2 (planner -> coder)" in done.stdout


@pytest.mark.parametrize("command", ["serve", "dev", "mcp"])
@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_no_socket_can_have_is_one_error_line(command: str, port: str) -> None:
    # `serve` printed "running on :99999" and exited 0; `dev` and `mcp --transport http`
    # ended in an OverflowError's traceback.
    extra = ["--transport", "http"] if command == "mcp" else []
    done = cli(command, EXAMPLE, "--port", port, *extra)
    assert done.returncode == 2, done.stderr[-500:]
    assert "--port" in done.stderr and "0 to 65535" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.parametrize("command", ["serve", "dev", "mcp"])
def test_an_empty_host_is_refused_not_bound_to_every_interface(command: str) -> None:
    # `--host "$HOST"` with the variable unset: `serve` bound every interface, its banner
    # naming `http://:8000/`
    extra = ["--transport", "http"] if command == "mcp" else []
    done = cli_main(command, EXAMPLE, "--host", "", "--port", "0", *extra)
    assert done.returncode == 2, done.stderr[-500:]
    assert "--host" in done.stderr and "0.0.0.0 for every interface" in done.stderr
    assert done.stdout == ""


def test_json_nested_too_deep_for_the_parser_is_one_error_line() -> None:
    deep = "[" * 20_000 + "]" * 20_000  # a RecursionError in json.loads: was a traceback
    state = cli("run", EXAMPLE, "hi", "--state", deep)
    assert state.returncode == 2, state.stderr[-300:]
    assert "error: --state is not valid JSON: nested too deeply" in state.stderr
    params = cli("run", EXAMPLE, "hi", env={"AGENT_NETWORK_PARAMS": deep})
    assert params.returncode == 2, params.stderr[-300:]
    assert "error: AGENT_NETWORK_PARAMS is not valid JSON: nested too deeply" in params.stderr
    assert "Traceback" not in state.stderr + params.stderr
