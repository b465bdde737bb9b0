"""A code-generation team: a planner, a coder and a reviewer, routed by code.

The planner writes the plan to state (`output_key="plan"`); the coder's `write_files` tool
(the library's checked writer, `agents.write_files_tool`) writes the files inside the output
folder only and accumulates them in `state.kv["files"]` (merged with `merge_dicts`); a path
that would leave the folder is refused and the model told. The reviewer approves or sends the
work back through its `review` tool. A plain function routes from what is in kv.

Small and local models often answer in text where a tool call was asked for. The router
notices (the agent that should have written state did not) and ends the run with a `Stop`
whose reason and summary say which agent and what it said instead; the program prints them
and exits with status 0. A model or network failure prints one line and exits with status 1.

    python examples/codegen.py --out out/                 # offline, on a scripted model
    python examples/codegen.py --model openai/gpt-4o-mini  # a real model
    python examples/codegen.py --model openai/NAME --api-base http://127.0.0.1:8080/v1 \
        --param max_tokens=160                            # a local OpenAI-compatible server
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Annotated, Any

from agents import Agent, Model, ScriptedModel, call, make_model, tool, write_files_tool
from network import AgentNetworkError, Network, RunContext, Stop, merge_dicts

TASK = "Write a Python module with a function that adds two numbers, and a test for it."


@tool(outputs_to_state={"review": {}})
def review(
    approved: Annotated[bool, "true when the files are ready to ship"],
    comments: Annotated[str, "what must change, if anything"] = "",
) -> dict[str, Any]:
    """Approve the files, or send them back with comments."""
    return {"approved": approved, "comments": comments}


STATE_SCHEMA = {
    "plan": {"type": str},
    "files": {"type": dict[str, str], "handler": merge_dicts},
    "review": {"type": dict[str, Any]},
}


def route(ctx: RunContext) -> Agent | Stop | None:
    """Plan once; code until the reviewer approves; review after every coding step.

    An agent that answered in text instead of doing its job (no plan, no tool call) ends the
    run with a `Stop` saying so: looping on it would only spend `max_iter` model calls.
    """
    kv = ctx.kv
    agents = ctx.network.agents
    last = ctx.last_result
    if not kv.has("plan"):
        if last is not None:  # the planner ran and wrote nothing
            return _gave_up(last, "the planner wrote no plan")
        return agents["planner"]  # type: ignore[return-value]
    if last is not None and last.agent in ("coder", "reviewer") and not last.tool_calls:
        job = "write_files" if last.agent == "coder" else "review"
        return _gave_up(last, f"the {last.agent} answered in text instead of calling {job}")
    if last is not None and last.agent == "coder":
        return agents["reviewer"]  # type: ignore[return-value]
    verdict = kv.get("review")
    if verdict and verdict.get("approved"):
        return None
    return agents["coder"]  # type: ignore[return-value]


def _gave_up(last: Any, what: str) -> Stop:
    said = (last.text or "").strip().replace("\n", " ")
    if len(said) > 200:
        said = said[:200] + "..."
    return Stop(f"{last.agent}_no_tool_call", f"{what}: {said!r}" if said else what)


def _system_text(request: Any) -> str:
    return "".join(message.content for message in request.system)


def scripted_models() -> dict[str, ScriptedModel]:
    """The offline script: a plan, a first draft, a rejection, a fix, an approval.

    Each answer is computed from the request (the instructions carry the state), so the same
    network can run any number of times.
    """
    draft = {"calc/add.py": "def add(a, b):\n    return a + b\n"}
    fix = {
        "calc/__init__.py": "",
        "tests/test_add.py": "from calc.add import add\n\n\ndef test_add():\n"
        "    assert add(2, 3) == 5\n",
    }
    plan = "1. calc/add.py with add(a, b).\n2. tests/test_add.py with a pytest test."

    def coder(request: Any) -> Any:
        sent_back = "add one" in _system_text(request)
        return call("write_files", files=fix if sent_back else draft)

    def reviewer(request: Any) -> Any:
        if '"tests/test_add.py":' in _system_text(request):  # the file exists in state
            return call("review", approved=True, comments="Looks good.")
        return call("review", approved=False, comments="The plan asks for a test: add one.")

    return {
        "planner": ScriptedModel(lambda request: plan, name="scripted-planner"),
        "coder": ScriptedModel(coder, name="scripted-coder"),
        "reviewer": ScriptedModel(reviewer, name="scripted-reviewer"),
    }


def build_network(
    model: str | Model | None = None, out: str | pathlib.Path | None = None
) -> Network:
    """The codegen network, on `model` (a model string or a `Model`) or the offline script.

    With `out`, the coder writes its files there as it goes (and never outside it); without,
    the files are checked the same way and kept in state only.
    """
    scripted = scripted_models() if model is None else {}
    planner = Agent(
        "planner",
        description="Breaks the task into a short numbered plan of files to write.",
        system="You plan small Python projects. Answer with a short numbered list of files.",
        model=scripted.get("planner", model),
        output_key="plan",
    )
    coder = Agent(
        "coder",
        description="Writes the files the plan asks for.",
        system=(
            "You write Python code. Follow the plan:\n{plan}\n"
            "Files so far: {files?}\nReviewer's comments: {review?}\n"
            "Call write_files with every file you add or change."
        ),
        tools=[write_files_tool(out, max_files=50, max_bytes=200_000)],
        tool_choice="write_files",
        model=scripted.get("coder", model),
    )
    reviewer = Agent(
        "reviewer",
        description="Reviews the files against the plan.",
        system=(
            "You review code against the plan:\n{plan}\nFiles: {files?}\n"
            "Call review: approve when every planned file exists and is correct."
        ),
        tools=[review],
        tool_choice="review",
        model=scripted.get("reviewer", model),
    )
    return Network(
        "codegen",
        agents=[planner, coder, reviewer],
        router=route,
        state_schema=STATE_SCHEMA,
        max_iter=12,
    )


network = build_network()


def model_parameter(text: str) -> tuple[str, Any]:
    """`--param KEY=VALUE`: a model parameter, its value read as JSON when it is JSON."""
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a litellm model string; default: offline script")
    parser.add_argument("--api-base", help="an OpenAI-compatible server for --model")
    parser.add_argument(
        "--param",
        type=model_parameter,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a model parameter, e.g. max_tokens=128 or seed=1 (with --model)",
    )
    parser.add_argument("--out", default="out", help="where to write the files (default: out)")
    parser.add_argument("task", nargs="?", default=TASK)
    args = parser.parse_args(argv)
    if args.model is not None and not args.model.strip():
        parser.error("--model needs a model string, e.g. openai/gpt-4o-mini")
    if args.model is None and (args.api_base is not None or args.param):
        parser.error("--api-base and --param go with --model (without it the run is offline)")
    model: str | Model | None = args.model
    if args.model and (args.api_base is not None or args.param):
        try:
            model = make_model(args.model, api_base=args.api_base, **dict(args.param))
        except AgentNetworkError as exc:  # a bad --api-base or --param, named
            parser.error(str(exc))
    if args.model:
        print(f"Running on {args.model}.")
    else:
        print("Running offline on a scripted model (pass --model provider/name for a real one).")
    _quiet_logs()
    out = pathlib.Path(args.out)
    try:
        result = build_network(model, out).run_sync(args.task)
    except AgentNetworkError as exc:  # the model could not be reached, or refused the request
        print(f"error: the run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    files = result.get("files") or {}
    refused = [record.content for record in result.tool_errors if record.name == "write_files"]
    print("Agents called:", " -> ".join(r.agent for r in result.results) or "none")
    for refusal in refused:
        print("Refused:", refusal)
    print(f"Files written to {out}/:", ", ".join(sorted(files)) or "none")
    print("Review:", (result.get("review") or {}).get("comments", "none"))
    print("Stop reason:", result.stop_reason)
    if result.summary:
        print("Why:", result.summary)
    return 0


def _quiet_logs() -> None:
    """An application decides what its logs show; this one only wants warnings."""
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


if __name__ == "__main__":
    sys.exit(main())
