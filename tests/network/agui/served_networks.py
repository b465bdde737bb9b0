"""Networks the cross-process tests serve with `agent-network serve --store` (offline).

Each runs on a `ScriptedModel` whose answers depend only on the request, so every server
process answers alike. Side effects go to files named by environment variables, so a test
can count them across processes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio

from agents import Agent, ScriptedModel, call, tool
from network import Network, RunContext

PAY_LOG_ENV = "AGENT_NETWORK_TEST_PAY_LOG"
GATE_ENV = "AGENT_NETWORK_TEST_GATE"


def _heard(request: Any) -> str:
    users = [m.content for m in request.history if m.role == "user"]
    return f"heard {len(users)}: {' | '.join(users)}"


notes = Network(
    "notes",
    agents=[Agent("scribe", model=ScriptedModel(_heard), output_key="summary")],
    state_schema={"topic": {"type": str}, "summary": {"type": str}},
)


@tool(requires_confirmation=True)
def pay(amount: int) -> str:
    """Pay `amount`."""
    with Path(os.environ[PAY_LOG_ENV]).open("a") as log:
        log.write(f"{os.getpid()} paid {amount}\n")
    return f"paid {amount}"


def _pay_script(request: Any) -> Any:
    if request.history and request.history[-1].role == "tool":
        return "done: " + request.history[-1].content
    return call("pay", amount=100)


def _until_text(name: str) -> Any:
    def route(ctx: RunContext) -> Any:
        last = ctx.last_result
        if last is None or (last.tool_calls and ctx.call_count < 4):
            return ctx.network.agents[name]
        return None

    return route


payments = Network(
    "payments",
    agents=[Agent("cashier", tools=[pay], model=ScriptedModel(_pay_script))],
    router=_until_text("cashier"),
)


@tool(requires_confirmation=True)
async def pay_slowly(amount: int) -> str:
    """Pay `amount`, then wait until the test releases the gate (it kills the server first)."""
    with Path(os.environ[PAY_LOG_ENV]).open("a") as log:
        log.write(f"{os.getpid()} paid {amount}\n")
    gate = Path(os.environ[GATE_ENV])
    (gate / f"paid-{os.getpid()}").touch()
    deadline = time.monotonic() + 60
    while not (gate / "release").exists() and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    return f"paid {amount}"


def _pay_slowly_script(request: Any) -> Any:
    last = request.history[-1]
    if last.role == "tool":
        return "done: " + last.content
    if last.role == "user" and "pay" in last.content:
        return call("pay_slowly", amount=100)
    return "heard: " + last.content


slow_payments = Network(
    "slow_payments",
    agents=[Agent("cashier", tools=[pay_slowly], model=ScriptedModel(_pay_slowly_script))],
    router=_until_text("cashier"),
)


@tool
async def hold() -> str:
    """Wait until the test releases the gate."""
    gate = Path(os.environ[GATE_ENV])
    (gate / f"started-{os.getpid()}").touch()
    deadline = time.monotonic() + 60
    while not (gate / "release").exists() and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    return "released"


def _hold_script(request: Any) -> Any:
    if request.history and request.history[-1].role == "tool":
        return "after the gate"
    return call("hold")


gated = Network(
    "gated",
    agents=[Agent("waiter", tools=[hold], model=ScriptedModel(_hold_script))],
    router=_until_text("waiter"),
)


CHARGE_LOG_ENV = "AGENT_NETWORK_TEST_CHARGE_LOG"


@tool
def charge() -> str:
    """Charge the customer (a side effect the test counts)."""
    with Path(os.environ[CHARGE_LOG_ENV]).open("a") as log:
        log.write(f"{os.getpid()} charged\n")
    return "charged"


async def _think_then_charge(request: Any) -> Any:
    """The model: takes its time (until the test opens the gate), then calls `charge`."""
    if request.history and request.history[-1].role == "tool":
        return "done: " + request.history[-1].content
    gate = Path(os.environ[GATE_ENV])
    (gate / f"thinking-{os.getpid()}").touch()
    deadline = time.monotonic() + 60
    while not (gate / "release").exists() and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    return call("charge")


ledger = Network(
    "ledger",
    agents=[Agent("cashier", tools=[charge], model=ScriptedModel(_think_then_charge))],
    router=_until_text("cashier"),
)
