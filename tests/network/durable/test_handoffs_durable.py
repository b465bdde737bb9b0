"""A durable run follows handoffs as a plain run does, and runs `on_handoff` once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agents import ToolContext, call
from network import durable
from tests.agents.airline import team

made: list[str] = []


def count_and_remember(ctx: ToolContext) -> None:
    made.append(ctx.tool_call_id)
    ctx.kv.set("flight", "FLT-7")


network, triage, faq, booking = team(
    [call("transfer_to_seat_booking", reason="seat")],
    booking_script=["Your seat is 12A."],
    on_booking=count_and_remember,
)


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[str]:
    db = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    durable.launch([network], db=db)
    try:
        yield db
    finally:
        durable.shutdown()


@pytest.mark.anyio
async def test_a_durable_run_follows_the_handoff_and_records_it(launched: str) -> None:
    result = await network.run("Move me", durable=True, run_id="handoff-run")

    assert [r.agent for r in result.results] == ["triage", "seat_booking"]
    assert result.results[0].handoff is not None
    assert result.results[0].handoff.target == "seat_booking"
    assert result.output == "Your seat is 12A." and result.state.kv.get("flight") == "FLT-7"
    assert len(made) == 1
    # the finished run's id returns its recorded outcome: nothing runs again
    again = await network.run("Move me", durable=True, run_id="handoff-run")
    assert again.output == result.output and len(made) == 1
