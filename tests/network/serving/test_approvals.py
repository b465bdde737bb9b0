"""Pairing a request's answers with what a thread waits on; every refusal applies nothing."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, tool
from network import Network
from network.run.interrupts import Answer, Interrupt
from network.serving.approvals import pair_answers
from network.serving.errors import RequestError


@tool(requires_confirmation=True)
def pay(amount: int) -> str:
    """Pay `amount`."""
    return f"paid {amount}"


NETWORK = Network("shop", agents=[Agent("cashier", tools=[pay], model=ScriptedModel(["x"]))])
WAITING = Interrupt(
    id="int_1", tool="pay", agent="cashier", tool_call_id="call_1", arguments={"amount": 5}
)


def refused(pending: list[Interrupt], answers: Any) -> RequestError:
    with pytest.raises(RequestError) as raised:
        pair_answers(NETWORK, "t1", pending, answers, field="answers")
    return raised.value


def test_nothing_waits_and_nothing_is_answered() -> None:
    assert pair_answers(NETWORK, "t1", [], None) == []


def test_every_pending_interrupt_needs_its_answer() -> None:
    accepted = Answer(interrupt_id="int_1", approved=True)
    assert pair_answers(NETWORK, "t1", [WAITING], [accepted]) == [(WAITING, accepted)]
    assert refused([WAITING], None).code == "interrupt_pending"
    assert "send `answers`" in refused([WAITING], None).message
    unknown = refused([WAITING], [Answer(interrupt_id="nope", approved=True)])
    assert (unknown.status, unknown.code) == (409, "invalid_resume")
    nothing = refused([], [accepted])
    assert (nothing.status, nothing.code) == (409, "no_pending_interrupt")


def test_edited_arguments_go_through_the_tools_schema() -> None:
    edited = Answer(interrupt_id="int_1", approved=True, arguments={"amount": "lots"})
    bad = refused([WAITING], [edited])
    assert (bad.status, bad.code) == (422, "invalid_resume") and "amount" in bad.message
    assert "lots" not in bad.message  # names the field, never the value
