"""The confirmation capability: a call of a `requires_confirmation` tool waits for a person,
and the run that answers finishes it (`agents.resume`) through the agent's capabilities."""

from __future__ import annotations

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from agents.capabilities.confirmation import Confirmation
from network import Network, StopReason

pytestmark = pytest.mark.anyio


def booking(paid: list[str]) -> Network:
    @tool(requires_confirmation=True)
    def pay(amount: int, ctx: ToolContext) -> str:
        """Pay an amount."""
        paid.append(str(amount))
        ctx.kv.set("paid", amount)
        return "paid"

    @tool
    def note(text: str) -> str:
        """Take a note."""
        return "noted"

    script = ScriptedModel([[call("pay", amount=5), call("note", text="hi")], "done"])
    agent = Agent("clerk", tools=[pay, note], model=script)
    return Network(
        "shop",
        agents=[agent],
        router=lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )


async def test_a_confirming_tool_waits_and_the_others_run() -> None:
    paid: list[str] = []
    network = booking(paid)
    assert any(isinstance(c, Confirmation) for c in network.agents["clerk"].capabilities)  # type: ignore[attr-defined]
    stopped = await network.run("buy")
    assert stopped.stop_reason == StopReason.INTERRUPTED and paid == []
    assert [r.name for r in stopped.results[0].tool_calls] == ["note"]  # pay has no record yet
    (waiting,) = stopped.interrupts
    assert waiting.tool == "pay" and waiting.arguments == {"amount": 5}
    resumed = await network.run(stopped.resume([waiting.accept()]))
    assert paid == ["5"] and resumed["paid"] == 5 and resumed.output == "done"


async def test_a_rejected_call_never_runs() -> None:
    paid: list[str] = []
    network = booking(paid)
    stopped = await network.run("buy")
    resumed = await network.run(stopped.resume([stopped.interrupts[0].reject("no")]))
    assert paid == [] and "rejected" in resumed.results[-2].tool_calls[0].content


async def test_a_call_with_invalid_arguments_is_not_held() -> None:
    paid: list[str] = []
    network = booking(paid)
    clerk = network.agents["clerk"]
    clerk.model = ScriptedModel([call("pay", amount="lots"), "done"])  # type: ignore[attr-defined]
    result = await network.run("buy")
    assert result.stop_reason != StopReason.INTERRUPTED and paid == []
    assert result.results[0].tool_calls[0].is_error
