"""A durable run stopped on an approval held in a parallel branch, resumed durably: the call
runs once, inside its branch, and the branch's agent goes on to its answer."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, Parallel, durable

RAN: list[str | None] = []


@tool(requires_confirmation=True)
def refund(amount: int, ctx: ToolContext) -> str:
    """Refund an amount."""
    RAN.append(ctx.run.branch.id if ctx.run.branch else None)
    ctx.kv.set("refunded", amount)
    return f"refunded {amount}"


def _payer(request: Any) -> Any:
    if request.history[-1].role == "tool":
        return f"payer read {request.history[-1].content}"
    return call("refund", amount=5)


payer = Agent("payer", tools=[refund], model=ScriptedModel(_payer))
other = Agent("other", model=ScriptedModel(lambda request: "other done"))
shop = Network(
    "branch_resume_shop",
    agents=[payer, other],
    router=lambda ctx: Parallel(payer, other, name="p") if ctx.call_count == 0 else None,
)


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[None]:
    durable.launch([shop], db=f"sqlite:///{tmp_path / 'dbos.sqlite'}")
    try:
        yield
    finally:
        durable.shutdown()


@pytest.mark.anyio
async def test_a_durable_resume_runs_the_held_call_in_its_branch(launched: None) -> None:
    RAN.clear()
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    stopped = await shop.run("go", durable=True, run_id=run_id)
    assert stopped.stop_reason == "interrupted"

    answers = [interrupt.accept() for interrupt in stopped.interrupts]
    resumed = await shop.run(stopped.resume(answers), durable=True, run_id=f"{run_id}-r")

    assert RAN == ["p/payer"]  # once, inside its branch
    assert resumed.output == "payer read refunded 5"
    assert [(r.branch, r.text) for r in resumed.results] == [
        ("p/payer", None),
        ("p/payer", "payer read refunded 5"),
    ]
    assert resumed.state.history_of("refunded")[-1].writer.branch == "p/payer"
