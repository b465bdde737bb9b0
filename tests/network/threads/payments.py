"""A network whose `pay` tool needs a person's approval and counts what it really did.

Every call of `pay` that runs appends a line to the file `PAY_LOG` names (or to `PAID`, in
this process): the side effects the exactly-once tests count, across processes too. With
`PAY_HANG` set, a call that paid then creates that file and hangs (for the test to kill its
process before the run commits the call's result).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from agents import Agent, ScriptedModel, ToolContext, call, client_tool, tool
from network import Network

PAID: list[int] = []


@tool(requires_confirmation=True)
def pay(amount: int, ctx: ToolContext) -> str:
    """Pay an amount."""
    PAID.append(amount)
    log = os.environ.get("PAY_LOG")
    if log:
        with Path(log).open("a") as file:
            file.write(f"{amount}\n")
    hang = os.environ.get("PAY_HANG")
    if hang:
        Path(hang).touch()
        time.sleep(600)  # killed here: paid, its result never committed
    ctx.kv.set("paid", amount)
    return f"paid {amount}"


CONFIRM = client_tool("confirm", "Ask the user to confirm.", {"type": "object", "properties": {}})


def script(request: Any) -> Any:
    last = request.history[-1]
    if last.role == "tool":
        return f"Done: {last.content}"
    if "confirm" in str(last.content):
        return call("confirm")
    return call("pay", amount=100)


def pay_network() -> Network:
    """A cashier that asks to pay 100 (or, asked to confirm, calls the client's tool)."""
    cashier = Agent("cashier", tools=[pay, CONFIRM], model=ScriptedModel(script))

    def router(ctx: Any) -> Any:
        last = ctx.last_result
        return cashier if last is None or last.tool_calls else None

    return Network("shop", agents=[cashier], router=router, state_schema={"paid": {"type": int}})
