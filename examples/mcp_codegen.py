"""A coder agent that writes its files through an MCP server's tools.

The filesystem is `examples/mcp_files_server.py`, a separate process the library starts over
stdio when the run needs it and stops when the run ends. Its `write_file` results land in state
through `outputs_to_state` (`files`, merged as a list), so the run's state says what was
written; the files themselves are on disk in `--out`.

    python examples/mcp_codegen.py --out out/                  # offline, on a scripted model
    python examples/mcp_codegen.py --model openai/gpt-4o-mini  # a real model
    agent-network mcp examples/mcp_codegen.py:network          # the coder, served over MCP
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agents import Agent, MCPServer, Model, ScriptedModel, call
from network import AgentNetworkError, Network, RunContext

TASK = "Write a Python module with a function that adds two numbers, and a test for it."
SERVER = str(Path(__file__).with_name("mcp_files_server.py"))

ADD = "def add(a: int, b: int) -> int:\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add() -> None:\n    assert add(2, 3) == 5\n"


def scripted() -> ScriptedModel:
    """The offline model: writes two files through the MCP tool, checks, then answers."""
    return ScriptedModel(
        [
            [call("write_file", path="calc.py", content=ADD)],
            [call("write_file", path="test_calc.py", content=TEST), call("list_files")],
            "Wrote calc.py with add(a, b) and test_calc.py testing it.",
        ],
        repeat_last=True,
    )


def files_server(out: str) -> MCPServer:
    return MCPServer.stdio(
        sys.executable,
        [SERVER],
        env={"FILES_ROOT": out},
        name="files",
        outputs_to_state={"write_file": {"files": {"source": "path"}}},
    )


def build_network(model: Model | str | None = None, out: str = "out") -> Network:
    """The one-agent network: the coder runs until it answers in text."""
    coder = Agent(
        "coder",
        description="Writes Python code and its tests into files.",
        system="You write small Python modules with tests. Write every file with write_file.",
        tools=[files_server(out)],
        model=model if model is not None else scripted(),
    )

    def until_answered(ctx: RunContext) -> Agent | None:
        last = ctx.last_result
        return coder if last is None or last.tool_calls else None

    return Network(
        "mcp_codegen",
        agents=[coder],
        router=until_answered,
        max_iter=10,
        state_schema={"files": {"type": list[str]}},
    )


network = build_network(out=os.environ.get("FILES_ROOT", "out"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out", help="the folder the files are written to")
    parser.add_argument("--model", help="a litellm model string; default: the scripted model")
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    if args.model is None:
        print("Running offline on a scripted model (pass --model for a real one).")
    else:
        print(f"Running on {args.model}.")
    team = build_network(args.model, str(Path(args.out).resolve()))
    try:
        result = team.run_sync(TASK)
    except AgentNetworkError as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"Files in state: {result.state.kv.get('files')}")
    print(f"Stop reason: {result.stop_reason}")
    print(f"Output: {result.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
