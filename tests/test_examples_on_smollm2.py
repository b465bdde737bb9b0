"""The examples whose flow a 135M model can drive, run against the real SmolLM2 server.

llama-cpp-python's server (tests/fakes/llama_server.py) constrains a request's answer to the
tool's JSON schema when `tool_choice` names one tool, so an agent forced to call its tool
always calls it, and an agent without tools answers in text. The examples built from such
steps are run here: `codegen.py` (planner text, forced `write_files`, forced `review`) and
`research_state.py` (forced `search_docs` twice, then a writer's text). What is asserted is
what the library and the example guarantee (the flow ran, state is consistent, files stay in
their folder, a clear outcome), never what the model says.

Not run here, and why:
- `supervisor_approval.py`: its supervisor is `routing_agent`, which asks with
  `tool_choice="required"`; llama-cpp-python's server refuses that, the request is relaxed to
  `"auto"`, and SmolLM2-135M then answers in text, so the run ends at once with
  `router_text` before any agent works: the approval and the fork are never reached.
- `weather_state_agui.py`: its agent must choose between two tools from the user's words
  (`tool_choice="auto"`); the server does not constrain that, and the model answers in text,
  so neither `user:` nor `app:` keys are ever written.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

from tests.fakes.llama_server import LlamaServer
from tests.test_examples import EXAMPLES

pytest_plugins = ["tests.fakes.llama_server"]

# Seeded sampling: the same answers on every run of the suite (the model is pinned).
PARAMS = ["--param", "seed=1"]


def on_smollm2(
    server: LlamaServer, name: str, *args: str, cwd: pathlib.Path
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(EXAMPLES / name), "--model", "openai/smollm2"]
    command += ["--api-base", server.base_url, *PARAMS, *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=600, cwd=cwd, check=False
    )


def test_codegen_on_smollm2_writes_only_inside_its_folder(
    llama_server: LlamaServer, tmp_path: pathlib.Path
) -> None:
    out = tmp_path / "out"
    # 64 tokens an answer bound the run's cost (the model's CPU is most of the test's): the flow
    # and its checks are the same at any length, and a 135M model's longer answers add nothing.
    done = on_smollm2(
        llama_server, "codegen.py", "--out", str(out), "--param", "max_tokens=64", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Running on openai/smollm2."
    called = next(line for line in lines if line.startswith("Agents called: "))
    assert called.startswith("Agents called: planner -> coder")
    reason = next(line for line in lines if line.startswith("Stop reason: "))
    assert reason.removeprefix("Stop reason: ") in {
        "router_finished",
        "max_iter",
        "coder_no_tool_call",
        "reviewer_no_tool_call",
    }
    listed = next(line for line in lines if line.startswith(f"Files written to {out}/: "))
    names = listed.split(": ", 1)[1]
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == ([] if names == "none" else sorted(names.split(", ")))
    assert {p.name for p in tmp_path.iterdir()} <= {"out"}  # nothing outside it


def test_research_state_on_smollm2_searches_twice_and_merges_into_state(
    llama_server: LlamaServer, tmp_path: pathlib.Path
) -> None:
    done = on_smollm2(llama_server, "research_state.py", "--param", "max_tokens=64", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.splitlines()[0] == "Running on openai/smollm2."
    assert "The model sees search_docs parameters: ['query']" in out
    assert "Agents called: researcher -> researcher -> writer" in out
    documents = int(re.search(r"^Documents: (\d+) \| typed: True$", out, re.M).group(1))  # type: ignore[union-attr]
    paths = re.findall(r"^  (\S+) \(score \d+\)$", out, re.M)
    assert len(paths) == documents  # every hit of both searches, appended
    visited = re.search(r"^Visited: (.*)$", out, re.M).group(1)  # type: ignore[union-attr]
    assert visited in ("None", repr(sorted(set(paths))))  # the handler's sorted union
    assert "Stop reason: router_finished" in out
    assert re.search(r"^Answer: \S", out, re.M)  # the writer answered in text
