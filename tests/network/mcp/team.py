"""A scripted team for the MCP serving tests: `agent-network mcp tests/network/mcp/team.py`.

The writer notes the input in state through a tool, then answers; the answer is stored under
`answer`. Input "explode" makes the model fail, so the run fails; input "leak" makes the
router fail with an exception whose text holds a password (`SECRET`); input "slow" takes its
note 3 s.
"""

from __future__ import annotations

from typing import Any

import anyio

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network
from network.errors import ModelError


@tool
async def note(text: str, ctx: ToolContext) -> str:
    """Keep `text` in the notes."""
    if text == "slow":  # a run that holds its place a while
        await anyio.sleep(3)
    ctx.kv.set("notes", [text])
    return "noted"


def answer(request: Any) -> Any:
    last = request.messages[-1]
    if last.role == "user":
        if last.content == "explode":
            return ModelError("the provider is down")
        return call("note", text=last.content)
    return f"done: {request.messages[-3].content}"


writer = Agent(
    "writer",
    description="Notes the request and answers it.",
    tools=[note],
    model=ScriptedModel(answer),
    output_key="answer",
)


SECRET = "hunter2-in-a-dsn"


def until_answered(ctx: Any) -> Any:
    if ctx.input == "leak":
        raise RuntimeError(f"could not reach postgres://admin:{SECRET}@db/app")
    last = ctx.last_result
    return writer if last is None or last.tool_calls else None


network = Network(
    "notes team",
    agents=[writer],
    router=until_answered,
    state_schema={"notes": {"type": list[str]}, "answer": {"type": str}, "user": {"type": str}},
)
