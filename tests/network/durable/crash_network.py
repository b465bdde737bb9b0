"""The network the crash tests run in child processes, with its side effects counted.

Every router decision, model call and tool call appends one line, `<kind> <run input>`, to
the file named by `AN_DURABLE_LOG` (outside the process, so it survives a SIGKILL). When the
log reaches `AN_KILL_AT` lines, or at this process's first call of kind `AN_KILL_KIND`, the
call writes `<log>.ready` and blocks: the test then kills the process with that call in
flight. This process's first call of kind `AN_SLOW_KIND` writes `<log>.slow`, then takes
`AN_SLOW_SECONDS` (default 6) before it goes on.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from agents import Agent, ScriptedModel, ToolContext, tool
from agents.models.scripted import call
from network import Network, RunContext
from network.history.messages import ToolMessage

ORDER = ["planner", "planner", "writer", "writer"]
"""Each agent runs twice: a call that uses the tool, then one that answers."""
SEQUENCE = [
    "router",
    "model:planner",
    "tool:note",
    "router",
    "model:planner",
    "router",
    "model:writer",
    "tool:note",
    "router",
    "model:writer",
    "router",
]
"""The side effects of one run, in order."""


_slowed: list[str] = []


def effect(kind: str, input: str) -> None:
    """Count one side effect; block (to be killed) when it is the chosen one."""
    log = Path(os.environ["AN_DURABLE_LOG"])
    with log.open("a") as out:
        out.write(f"{kind} {input}\n")
    if os.environ.get("AN_SLOW_KIND") == kind and not _slowed:
        _slowed.append(kind)  # this process's first call of that kind takes its time
        Path(f"{log}.slow").write_text(kind)
        time.sleep(float(os.environ.get("AN_SLOW_SECONDS", "6")))
    kill_at = int(os.environ.get("AN_KILL_AT", "0"))
    chosen = kill_at and len(log.read_text().splitlines()) == kill_at
    if chosen or os.environ.get("AN_KILL_KIND") == kind:
        # Written whole, then renamed: the test polls for the name and reads it at once, so a
        # file seen before its text was written would read empty.
        partial = Path(f"{log}.ready.partial")
        partial.write_text(kind)
        os.replace(partial, f"{log}.ready")
        time.sleep(600)  # the test kills the process here, with this call in flight


def answer(request: Any) -> Any:
    effect(f"model:{request.agent}", request.history[0].content)
    last = request.history[-1] if request.history else None
    if isinstance(last, ToolMessage):
        return f"{request.agent} is done"
    return call("note", text=f"{request.agent} wrote this")


@tool
def note(text: str, ctx: ToolContext) -> str:
    """Write a note."""
    effect("tool:note", ctx.run.input if ctx.run is not None else "")
    ctx.state.kv.set("notes", [text])
    ctx.state.kv.set("count", ctx.state.kv.get("count", 0) + 1)
    return "noted"


def route(ctx: RunContext) -> Any:
    effect("router", ctx.input)
    if ctx.call_count >= len(ORDER):
        return None
    name = ORDER[ctx.call_count]
    ctx.state.kv.set("routed", [name])
    return name


model = ScriptedModel(answer)
team = Network(
    "team",
    agents=[
        Agent("planner", description="plans", system="Plan.", tools=[note], model=model),
        Agent("writer", description="writes", system="Write.", tools=[note], model=model),
    ],
    router=route,
    state_schema={
        "notes": {"type": list[str]},
        "routed": {"type": list[str]},
        # a resumed process may declare another type (a test of replayed writes' validation)
        "count": {"type": str if os.environ.get("AN_COUNT_AS_TEXT") else int},
    },
)
crew = Network("crew", agents=list(team.agents.values()), router=route, state_schema=team.schema)
"""The same team under another name: a second network for workers that serve one each."""
