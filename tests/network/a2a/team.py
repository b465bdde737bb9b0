"""A scripted team for the A2A tests: `agent-network serve tests/network/a2a/team.py --a2a`.

The cashier answers "pay N" with a call of `pay` (which waits for a person's approval), "wait
N" with a tool that sleeps N seconds (to cancel it), "explode" with a model failure, "crash"
by raising a ValueError (and "crash tool" with a tool that raises one), a password
(`IN_FRAME`) in the failing frame, "leak" with a router failure whose text holds another
(`SECRET`), and anything else with an echo.
After a tool it says "done: <the tool's result>". Every payment appends a line to the file
named by `$A2A_PAID_FILE` (when set): the side effect the tests count across processes.
"""

from __future__ import annotations

import os
from typing import Any

import anyio

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network
from network.errors import ModelError

SECRET = "hunter2-in-a-dsn"
IN_FRAME = "swordfish-in-a-frame"  # a local of the failing frames, never in their message
PAID: list[int] = []


@tool(requires_confirmation=True)
def pay(amount: int, ctx: ToolContext) -> str:
    """Pay `amount`."""
    PAID.append(amount)
    ledger = os.environ.get("A2A_PAID_FILE")
    if ledger:
        with open(ledger, "a", encoding="utf-8") as out:
            out.write(f"{amount}\n")
    ctx.kv.set("paid", amount)
    return f"paid {amount}"


@tool
def crash() -> str:
    """Fail as a tool script does, an ordinary exception."""
    password = IN_FRAME  # a local a traceback renderer showing locals would print
    raise ValueError(f"the tool broke ({len(password)})")


@tool
async def wait(seconds: float) -> str:
    """Wait `seconds`."""
    await anyio.sleep(seconds)
    return f"waited {seconds:g}"


def script(request: Any) -> Any:
    last = request.history[-1]
    if last.role == "tool":
        return f"done: {last.content}"
    lines = str(last.content).splitlines()
    text = lines[-1] if lines else ""  # a turn of several messages: the newest says what to do
    if text == "explode":
        return ModelError("the provider is down")
    if text == "crash":  # the model raises an ordinary exception, a secret in its frame
        password = IN_FRAME
        raise ValueError(f"the model broke ({len(password)})")
    if text == "crash tool":
        return call("crash")
    if text.startswith("pay "):
        return call("pay", amount=int(text.split()[1]))
    if text == "recall":
        said = [str(m.content) for m in request.history if m.role == "user"]
        return "recall: " + " | ".join(said)
    if text.startswith("wait "):
        return call("wait", seconds=float(text.split()[1]))
    return f"echo: {text}"


cashier = Agent(
    "cashier",
    description="Pays bills after a person approves, and echoes anything else.",
    tools=[pay, wait, crash],
    model=ScriptedModel(script),
)


def route(ctx: Any) -> Any:
    if ctx.input == "leak":
        raise RuntimeError(f"could not reach postgres://admin:{SECRET}@db/app")
    last = ctx.last_result
    return cashier if last is None or last.tool_calls else None


network = Network(
    "till",
    agents=[cashier],
    router=route,
    state_schema={"paid": {"type": int}, "note": {"type": str}},
)
