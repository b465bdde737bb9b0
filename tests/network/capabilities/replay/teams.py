"""A small codegen team on scripted models, built the same way each time with what a test
changes (a prompt, a tool's description, a tool's result, the router), and counting every
model request and tool call it makes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agents import Agent, ScriptedModel, call, tool
from network import AssistantMessage, Network, RunContext, State, merge_dicts

TASK = "Write add(a, b) with a test."
PLANNER = "You plan small Python projects. Answer with a numbered list of files."
CODER = "You write Python code. Follow the plan:\n{plan}\nFiles so far: {files?}"
REVIEWER = "You review code against the plan:\n{plan}\nFiles: {files?}"


@dataclass
class Counts:
    """What the team did: model requests by agent, tool calls by tool."""

    requests: dict[str, int] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=dict)

    def asked(self, agent: str) -> None:
        self.requests[agent] = self.requests.get(agent, 0) + 1

    def ran(self, name: str) -> None:
        self.tools[name] = self.tools.get(name, 0) + 1


def codegen(
    counts: Counts | None = None,
    *,
    coder_prompt: str = CODER,
    save_doc: str = "Save files to the project.",
    saved: str = "saved",
    reviewer_first: bool = False,
) -> Network:
    """The team: planner -> coder (saves files: state, reasoning) -> reviewer (approves)."""
    counts = counts if counts is not None else Counts()

    def save(files: dict[str, str], state: State) -> str:
        counts.ran("save")
        state.kv.set("files", files)
        return f"{saved} {', '.join(sorted(files))}"

    save.__doc__ = save_doc
    save_tool = tool(save)

    @tool
    def review(approved: bool, comments: str = "") -> str:
        """Approve the files, or send them back."""
        counts.ran("review")
        return "approved" if approved else f"changes asked: {comments}"

    def planner_answer(request: Any) -> Any:
        counts.asked("planner")
        return "1. add.py\n2. test_add.py"

    def coder_answer(request: Any) -> Any:
        counts.asked("coder")
        if request.history[-1].role == "tool":
            return "Saved add.py and test_add.py."
        files = {"add.py": "def add(a, b):\n    return a + b\n", "test_add.py": "assert True\n"}
        return AssistantMessage(
            None, [call("save", files=files)], reasoning="The plan asks for two files."
        )

    def reviewer_answer(request: Any) -> Any:
        counts.asked("reviewer")
        if request.history[-1].role == "tool":
            return "Approved."
        return call("review", approved=True)

    planner = Agent(
        "planner", system=PLANNER, model=ScriptedModel(planner_answer), output_key="plan"
    )
    coder = Agent(
        "coder", system=coder_prompt, tools=[save_tool], model=ScriptedModel(coder_answer)
    )
    reviewer = Agent(
        "reviewer", system=REVIEWER, tools=[review], model=ScriptedModel(reviewer_answer)
    )
    order = ["planner", "reviewer", "coder"] if reviewer_first else ["planner", "coder", "reviewer"]

    def route(ctx: RunContext) -> Any:
        last = ctx.last_result
        if last is None:
            return order[0]
        if last.tool_calls:  # the same agent reads its tool's result
            return last.agent
        at = order.index(last.agent)
        return order[at + 1] if at + 1 < len(order) else None

    return Network(
        "codegen",
        agents=[planner, coder, reviewer],
        router=route,
        state_schema={
            "plan": {"type": str},
            "files": {"type": dict[str, str], "handler": merge_dicts},
        },
    )
