"""A deterministic A2A agent to run the official A2A test kit (a2aproject/a2a-tck) against.

    agent-network serve examples/a2a_test_agent.py:network --a2a --port 9999

Offline and scripted (no model, no key), so every answer is known in advance:

- "pay N": asks to run `pay` (which waits for a person's approval: the task goes to
  `input-required`); approved, it pays and answers "done: paid N"; rejected, it says so;
- "wait N": a tool that sleeps N seconds (a task to cancel, or to resubscribe to);
- "explode": the model fails (the task fails, with the library's error text);
- "recall": the user's messages of this context so far (a context continued);
- anything else: "echo: <the text>".

The payments it made are kept in state (`paid`), so a test kit reading the task's `state`
artifact sees them. docs/a2a.md says how to run the kit.
"""

from __future__ import annotations

from typing import Any

import anyio

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network
from network.errors import ModelError


@tool(requires_confirmation=True)
def pay(amount: int, ctx: ToolContext) -> str:
    """Pay `amount`."""
    ctx.kv.set("paid", amount)
    return f"paid {amount}"


@tool
async def wait(seconds: float) -> str:
    """Wait `seconds` (at most an hour)."""
    await anyio.sleep(min(max(seconds, 0.0), 3600.0))
    return f"waited {seconds:g}"


def script(request: Any) -> Any:
    """The agent's whole behaviour (see the module docstring)."""
    last = request.history[-1]
    if last.role == "tool":
        return f"done: {last.content}"
    text = str(last.content).strip()
    words = text.split()
    if text == "explode":
        return ModelError("the scripted model was asked to fail")
    if len(words) == 2 and words[0] == "pay" and words[1].isdigit():
        return call("pay", amount=int(words[1]))
    if len(words) == 2 and words[0] == "wait" and words[1].replace(".", "", 1).isdigit():
        return call("wait", seconds=float(words[1]))
    if text == "recall":
        said = [str(m.content) for m in request.history if m.role == "user"]
        return "recall: " + " | ".join(said)
    return f"echo: {text}"


cashier = Agent(
    "cashier",
    description="Echoes what it is told; pays after a person approves; waits on request.",
    tools=[pay, wait],
    model=ScriptedModel(script),
)

network = Network(
    "a2a-conformance-agent",  # no "test" in the card: the kit flags the word near a URL
    agents=[cashier],
    router=lambda ctx: cashier if ctx.last_result is None or ctx.last_result.tool_calls else None,
    state_schema={"paid": {"type": int}},
)

if __name__ == "__main__":
    print("offline: serve it with: agent-network serve examples/a2a_test_agent.py:network --a2a")
