"""Typed output as predictive state: the key fills while the answer streams, then commits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agents import ScriptedModel
from network import Network, OutputValidationError
from tests.agents.capabilities.output.ticket import TICKET, Ticket, agent
from tests.network.agui.protocol import replay, wire

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


async def test_partial_output_streams_as_predictive_state_and_is_then_committed() -> None:
    class Schema(BaseModel):
        ticket: Ticket | None = None

    text = json.dumps(TICKET)
    triage = agent(
        ScriptedModel([text], stream=True, chunk_size=5), output_type=Ticket, output_key="ticket"
    )
    network = Network("n", agents=[triage], state_schema=Schema)
    async with network.stream("x") as stream:
        got = [event async for event in stream]
    run = replay(wire(got))
    start = run.types.index("TEXT_MESSAGE_START")
    end = run.types.index("TEXT_MESSAGE_END")
    predicted = [e["delta"] for e in run.events[start:end] if e["type"] == "STATE_DELTA"]
    assert len(predicted) >= 3  # the form fills as the JSON grows
    values = [delta[0]["value"] for delta in predicted]
    assert all(delta[0]["path"] == "/ticket" for delta in predicted)
    assert values[-1] == TICKET
    assert any(v.get("title") not in (None, "Login fails") for v in values)  # a title half-written
    assert run.state["ticket"] == TICKET  # the committed value, as the client has it
    assert isinstance(stream.result["ticket"], Ticket)


async def test_a_prediction_that_never_validates_is_taken_back() -> None:
    triage = agent(
        ScriptedModel(['{"title": "half"}'], stream=True, repeat_last=True),
        output_type=Ticket,
        output_key="ticket",
        output_retries=1,
    )
    network = Network("n", agents=[triage])
    got: list[Any] = []
    with pytest.raises(OutputValidationError):
        async with network.stream("x") as stream:
            async for event in stream:
                got.append(event)
    run = replay(wire(got), allow_error=True)
    deltas = [e["delta"] for e in run.events if e["type"] == "STATE_DELTA"]
    assert [{"op": "add", "path": "/ticket", "value": {"title": "half"}}] in deltas
    assert deltas[-1] == [{"op": "remove", "path": "/ticket"}]
    assert "ticket" not in run.state
    assert run.error is not None  # the run failed with OutputValidationError
    invalid = [e["value"] for e in run.of("CUSTOM") if e["name"] == "OutputInvalid"]
    assert [(v["attempt"], v["retrying"]) for v in invalid] == [(1, True), (2, False)]
    assert invalid[0]["agent"] == "triage" and "priority: Field required" in invalid[0]["errors"]
