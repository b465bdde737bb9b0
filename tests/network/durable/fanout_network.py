"""Networks with a `Parallel` fan-out, run durably in child processes and killed mid-run.

`survey`: the router fans out to three agents (`Parallel`), each asking its model, which
answers with two tool calls (`note` and `tag`, run concurrently), then, reading their results,
with its text (a branch runs its agent's tool loop); after the join a `writer` answers once.
`mapped`: the router maps one agent over two items (`Parallel.map`), with
`on_error="continue"`. `duo`: no fan-out, one agent whose answer holds the two tool calls.

Models and tools sleep a random time before answering, so the branches interleave
differently on every attempt. Every router decision, model call and tool call appends one
line `<step name> <ordinal>` to the file named by `AN_DURABLE_LOG` (outside the process):
the step's DBOS name, and its place among the steps of that name (the router: the call count
it routed at; a branch's model call: 1, or 2 for the one that reads its tools' results; any
other: 1). When the log reaches `AN_KILL_AT` lines, or when
the line is `AN_KILL_LINE`, the call writes `<log>.ready` and blocks, to be killed.

`AN_SLOW_MODEL=<branch>`: that branch's first model call sleeps longer (attempt one's
interleaving); `AN_SLOW_START=<branch>`: that branch's agent call starts late (its `on_start`
hook sleeps; hooks run again on replay, so a resumed run's interleaving differs).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import anyio

from agents import Agent, ScriptedModel, ToolContext, tool
from network import Network, Parallel, RunContext, merge_dicts
from network.history.messages import ToolCall, ToolMessage

JITTER = 0.03
SLOW = 0.4


def effect(line: str) -> None:
    """Count one side effect; block (to be killed) when it is the chosen one."""
    log = Path(os.environ["AN_DURABLE_LOG"])
    with log.open("a") as out:
        out.write(line + "\n")
    kill_at = int(os.environ.get("AN_KILL_AT", "0"))
    chosen = kill_at and len(log.read_text().splitlines()) == kill_at
    if chosen or os.environ.get("AN_KILL_LINE") == line:
        # Written whole, then renamed: the test polls for the name and reads it at once, so a
        # file seen before its text was written would read empty.
        partial = Path(f"{log}.ready.partial")
        partial.write_text(line)
        os.replace(partial, f"{log}.ready")
        time.sleep(600)  # the test kills the process here, with this call in flight


def _suffix(branch: str | None) -> str:
    return f"@{branch}" if branch else ""


def _branch_of(request: Any) -> str | None:
    """The branch a model request comes from (its agent and its own input say which)."""
    if request.agent in ("writer", "duo"):
        return None
    if request.agent == "mapper":
        asked = [m.content for m in request.history if str(m.content).startswith("item ")]
        return f"mapped/mapper#{ITEMS.index(asked[-1].removeprefix('item '))}"
    return f"survey/{request.agent}"


async def answer(request: Any) -> Any:
    branch = _branch_of(request)
    answering = branch is not None and isinstance(request.history[-1], ToolMessage)
    effect(f"model:{request.agent}{_suffix(branch)} {2 if answering else 1}")
    slow = branch is not None and branch.endswith(os.environ.get("AN_SLOW_MODEL") or "-")
    await anyio.sleep(SLOW if slow else random.uniform(0, JITTER))
    if request.agent == "writer":
        notes = ", ".join(note for note in _notes(request))
        return f"summary of {notes}"
    if answering:  # the branch's tools ran: its agent answers
        return f"{request.agent} done"
    place = branch or request.agent
    return [
        ToolCall(f"{place}:note", "note", {"text": f"{request.agent} noted"}),
        ToolCall(f"{place}:tag", "tag", {"label": request.agent}),
    ]


def _notes(request: Any) -> list[str]:
    return [m.content for m in request.history if isinstance(m, ToolMessage)]


@tool
async def note(text: str, ctx: ToolContext) -> str:
    """Write a note."""
    run = ctx.run
    assert run is not None
    branch = run.branch
    effect(f"tool:note{_suffix(branch.id if branch else None)} 1")
    await anyio.sleep(random.uniform(0, JITTER))
    item = branch.item if branch is not None else None
    written = f"{text} {item}" if item is not None else text
    ctx.state.kv.set("notes", [written])
    ctx.state.kv.set("by_branch", {branch.id if branch else "-": written})
    return f"noted: {written}"


@tool
async def tag(label: str, ctx: ToolContext) -> str:
    """Tag the run."""
    run = ctx.run
    assert run is not None
    branch = run.branch
    effect(f"tool:tag{_suffix(branch.id if branch else None)} 1")
    await anyio.sleep(random.uniform(0, JITTER))
    # the same key as `note`, from a concurrent call: merged in the model's order
    ctx.state.kv.set("notes", [f"{label}#{branch.index if branch else '-'}"])
    return "tagged"


async def start_late(call: Any) -> None:
    """`on_start`: the branch named by `AN_SLOW_START` starts late (on replay too)."""
    branch = call.run.branch
    wanted = os.environ.get("AN_SLOW_START")
    if wanted and branch is not None and branch.id.endswith(wanted):
        await anyio.sleep(SLOW)


def route(ctx: RunContext) -> Any:
    effect(f"router {ctx.call_count}")
    if ctx.network.name == "survey":
        if ctx.call_count == 0:
            return Parallel(researcher, critic, analyst, name="survey")
        return writer if ctx.call_count == 6 else None  # the branches made two calls each
    if ctx.network.name == "duo":
        return duo if ctx.call_count == 0 else None
    if ctx.call_count == 0:
        return Parallel.map(
            mapper, ITEMS, input=lambda item: f"item {item}", on_error="continue", name="mapped"
        )
    return None


model = ScriptedModel(answer)
hooks = {"on_start": start_late}
researcher = Agent(
    "researcher", description="researches", tools=[note, tag], model=model, hooks=hooks
)
critic = Agent("critic", description="criticises", tools=[note, tag], model=model, hooks=hooks)
analyst = Agent("analyst", description="analyses", tools=[note, tag], model=model, hooks=hooks)
writer = Agent("writer", description="writes", model=model)
mapper = Agent("mapper", description="maps", tools=[note, tag], model=model, hooks=hooks)
ITEMS = ["x", "y"]
SCHEMA = {
    "notes": {"type": list[str]},
    "by_branch": {"type": dict[str, str], "handler": merge_dicts},
}

survey = Network(
    "survey", agents=[researcher, critic, analyst, writer], router=route, state_schema=SCHEMA
)
mapped = Network("mapped", agents=[mapper], router=route, state_schema=SCHEMA)
duo = Agent("duo", description="notes and tags at once", tools=[note, tag], model=model)
single = Network("duo", agents=[duo], router=route, state_schema=SCHEMA)
NETWORKS = {"survey": survey, "mapped": mapped, "duo": single}

SURVEY = ("researcher", "critic", "analyst")
STEPS = {
    "survey": {
        "router": 3,
        **{f"{kind}@survey/{a}": 1 for a in SURVEY for kind in ("tool:note", "tool:tag")},
        **{f"model:{a}@survey/{a}": 2 for a in SURVEY},  # its tool call, then its answer
        "model:writer": 1,
    },
    "mapped": {
        "router": 2,
        **{f"{kind}@mapped/mapper#{i}": 1 for i in range(2) for kind in ("tool:note", "tool:tag")},
        **{f"model:mapper@mapped/mapper#{i}": 2 for i in range(2)},
    },
}
"""How many steps of each name one run records."""
