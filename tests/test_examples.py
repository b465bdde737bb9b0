"""Every example runs offline, on its scripted models, and says so on its first line."""

import importlib.util
import os
import pathlib
import subprocess
import sys
from types import ModuleType

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
# Examples that serve rather than finish are exercised by their own tests.
SERVERS = {
    "agui_server.py": "tests/network/agui",
    "mcp_files_server.py": "tests/test_examples.py (started by mcp_codegen.py)",
    "a2a_test_agent.py": "tests/test_a2a_test_agent.py",
}


def run_example(
    name: str, *args: str, cwd: pathlib.Path, api_base: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run an example as a user would; `api_base` points its `--model` at that server."""
    env = None
    if api_base is not None:
        env = {**os.environ, "OPENAI_API_BASE": api_base, "OPENAI_API_KEY": "k"}
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
        check=False,
    )


def load_example(name: str) -> ModuleType:
    """An example imported as a module, for tests that build its network themselves."""
    spec = importlib.util.spec_from_file_location(f"{name}_example", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_is_covered() -> None:
    scripts = {path.name for path in EXAMPLES.glob("*.py")}
    assert scripts - SERVERS.keys() == {
        "codegen.py",
        "mcp_codegen.py",
        "research_bot.py",
        "memory_assistant.py",
        "support.py",
        # the porting guides' programs: tests/test_porting_examples.py
        "customer_service.py",
        "research_state.py",
        "supervisor_approval.py",
        "weather_state_agui.py",
    }


@pytest.mark.heavy
def test_mcp_codegen_writes_through_the_mcp_server_and_records_it_in_state(
    tmp_path: pathlib.Path,
) -> None:
    done = run_example("mcp_codegen.py", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "offline" in done.stdout.splitlines()[0]
    assert "Files in state: ['calc.py', 'test_calc.py']" in done.stdout
    assert "Stop reason: router_finished" in done.stdout
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["calc.py", "test_calc.py"]
    assert "assert add(2, 3) == 5" in (tmp_path / "out" / "test_calc.py").read_text()


def test_codegen_runs_offline_and_writes_its_files(tmp_path: pathlib.Path) -> None:
    done = run_example("codegen.py", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "offline" in lines[0] and "scripted" in lines[0]
    assert "Agents called: planner -> coder -> reviewer -> coder -> reviewer" in done.stdout
    assert "Stop reason: router_finished" in done.stdout
    written = sorted(
        p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.py")
    )
    assert written == ["calc/__init__.py", "calc/add.py", "tests/test_add.py"]
    test_file = (tmp_path / "out" / "tests" / "test_add.py").read_text()
    assert "assert add(2, 3) == 5" in test_file


@pytest.mark.parametrize(
    ("question", "agents", "answer"),
    [
        ("I was charged twice on invoice INV-42", "billing -> billing", "refunded"),
        ("My app crashes on start", "tech", "Reinstall"),
    ],
)
def test_support_team_is_routed_by_the_routing_agent(
    tmp_path: pathlib.Path, question: str, agents: str, answer: str
) -> None:
    done = run_example("support.py", question, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "offline" in done.stdout.splitlines()[0]
    assert f"Agents called: {agents}" in done.stdout
    assert answer in done.stdout
    assert "Stop reason: router_done" in done.stdout


def test_codegen_runs_on_a_model_named_on_the_command_line(tmp_path: pathlib.Path) -> None:
    from tests.fakes import FakeOpenAIServer

    draft = {"calc/add.py": "def add(a, b):\n    return a + b\n"}
    with FakeOpenAIServer() as server:
        server.add_text("1. calc/add.py with add(a, b).")
        server.add_tool_calls(("write_files", {"files": draft}))
        server.add_tool_calls(("review", {"approved": True, "comments": "Fine."}))
        done = run_example(
            "codegen.py",
            *("--model", "openai/fake-model", "--out", str(tmp_path / "out")),
            cwd=tmp_path,
            api_base=server.base_url,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[0] == "Running on openai/fake-model."
        assert "Agents called: planner -> coder -> reviewer" in done.stdout
        assert (tmp_path / "out" / "calc" / "add.py").read_text() == draft["calc/add.py"]
        assert {r["model"] for r in server.requests} == {"fake-model"}
        first_system = server.requests[1]["messages"][0]["content"]
        assert "1. calc/add.py with add(a, b)." in first_system  # the plan, from state


def test_codegen_refuses_paths_that_leave_its_output_folder(tmp_path: pathlib.Path) -> None:
    from tests.fakes import FakeOpenAIServer

    out = tmp_path / "work" / "out"
    out.mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (out / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    hostile = {"../../escape.py": "x", "/tmp/abs.py": "x", "a/../../x.py": "x", "link/x.py": "x"}
    good = {"calc/add.py": "def add(a, b):\n    return a + b\n"}
    with FakeOpenAIServer() as server:
        server.add_text("1. calc/add.py")
        server.add_tool_calls(("write_files", {"files": hostile}))
        server.add_tool_calls(("review", {"approved": False, "comments": "Write calc/add.py."}))
        server.add_tool_calls(("write_files", {"files": good}))
        server.add_tool_calls(("review", {"approved": True, "comments": "Fine."}))
        done = run_example(
            "codegen.py",
            *("--model", "openai/m", "--out", str(out)),
            cwd=tmp_path,
            api_base=server.base_url,
        )
    assert done.returncode == 0, done.stderr
    assert "planner -> coder -> reviewer -> coder -> reviewer" in done.stdout
    refusal = next(line for line in done.stdout.splitlines() if line.startswith("Refused:"))
    for name in hostile:
        assert repr(name) in refusal
    assert list((tmp_path / "outside").iterdir()) == []
    assert not (tmp_path / "escape.py").exists() and not (tmp_path / "x.py").exists()
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        "calc",
        "calc/add.py",
        "link",
    ]


TEXT_ONLY = "Here is the code:\n```python\ndef add(a, b):\n    return a + b\n```"


def test_codegen_on_a_model_that_never_calls_a_tool_stops_and_says_why() -> None:
    from agents import ScriptedModel

    codegen = load_example("codegen")
    text_only = ScriptedModel(lambda request: TEXT_ONLY, name="text-only")
    result = codegen.build_network(text_only).run_sync(codegen.TASK)
    assert [r.agent for r in result.results] == ["planner", "coder"]
    assert result.stop_reason == "coder_no_tool_call"
    assert "the coder answered in text instead of calling write_files" in result.summary
    assert "def add(a, b)" in result.summary  # what it said instead
    assert "files" not in result


def test_codegen_command_on_a_text_only_endpoint_ends_cleanly(tmp_path: pathlib.Path) -> None:
    from tests.fakes import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        for _ in range(3):
            server.add_text(TEXT_ONLY)
        done = run_example(
            "codegen.py", "--model", "openai/fake-model", cwd=tmp_path, api_base=server.base_url
        )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "Agents called: planner -> coder" in done.stdout
    assert "Files written to out/: none" in done.stdout
    assert "Stop reason: coder_no_tool_call" in done.stdout
    assert "Why: the coder answered in text instead of calling write_files" in done.stdout


def test_codegen_command_against_an_endpoint_that_is_down_prints_one_line(
    tmp_path: pathlib.Path,
) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = run_example(
        "codegen.py",
        *("--model", "openai/fake-model"),
        cwd=tmp_path,
        api_base=f"http://127.0.0.1:{port}/v1",
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: the run failed: ModelError"), done.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--model", "openai/x", "--api-base", "ftp://x"], "api_base must be an http://"),
        (["--model", "openai/x", "--param", "max_tokens=abc"], "'max_tokens' must be an int"),
        (["--model", "openai/x", "--param", "max_tokens"], "expected KEY=VALUE"),
        (["--api-base", "http://127.0.0.1:8000/v1"], "go with --model"),
        (["--model", ""], "--model needs a model string"),
    ],
)
def test_codegen_refuses_a_bad_model_option_in_one_line(
    tmp_path: pathlib.Path, args: list[str], said: str
) -> None:
    # the README's first command with the options it suggests next: a bad --api-base or
    # --param was a traceback, an --api-base without --model was ignored (the run offline)
    done = run_example("codegen.py", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert said in done.stderr.splitlines()[-1], done.stderr


def test_support_on_a_model_that_never_calls_a_tool_ends_with_the_routers_reason() -> None:
    from agents import ScriptedModel

    support = load_example("support")
    text_only = ScriptedModel(lambda request: "Billing should answer this.", name="text-only")
    result = support.build_network(text_only).run_sync("I was charged twice")
    assert result.stop_reason == "router_text"
    assert result.results == []  # the router answered in text: nobody was called


def test_research_bot_plans_searches_in_parallel_tool_loops_and_writes_a_cited_report(
    tmp_path: pathlib.Path,
) -> None:
    done = run_example("research_bot.py", "owls", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "searched: ['owls costs', 'owls sites']"  # each branch ran its tool
    assert "three articles about owls costs" in lines[1]  # and answered from its result
    assert "three articles about owls sites" in lines[1]
    assert lines[2] == "sources: ['search 1', 'search 2']"  # the validator's re-ask worked


@pytest.mark.heavy
def test_memory_assistant_remembers_across_threads_and_processes(tmp_path: pathlib.Path) -> None:
    """Each command is a new process and a new thread; the second still knows (docs/memory.md)."""
    data = str(tmp_path / "data")

    def say(user: str, thread: str, *args: str) -> str:
        done = run_example(
            "memory_assistant.py", "--data", data, "--user", user, "--thread", thread, *args,
            cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "offline" in done.stdout.splitlines()[0]
        assert done.stderr == ""  # nothing logged: the library configures no logging
        return done.stdout

    assert "Noted" in say("ann", "trip-1", "I always take a window seat.")
    assert "keeping in mind: I always take a window seat." in say(
        "ann", "trip-2", "Fly me to Porto."
    )
    bob = say("bob", "trip-3", "Fly me to Porto.")
    assert "keeping in mind" not in bob and "Memories of bob: []" in bob
    extracted = say("bob", "trip-4", "I prefer the aisle.", "--extract")
    assert "Extracted: ['I prefer the aisle.']" in extracted
    assert "Deleted 1 thread and 1 memories." in say("ann", "trip-1", "--forget")
    assert "Memories of ann: []" in say("ann", "trip-5", "Fly me to Porto.")
