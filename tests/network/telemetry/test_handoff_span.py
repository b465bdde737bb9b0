"""The trace of a handoff, span by span: the `handoff {target}` span under the tool call."""

from __future__ import annotations

import pytest

from agents import call
from network import Network
from tests.agents.airline import team
from tests.network.telemetry.otel import Recorder, every_value, tree

pytestmark = pytest.mark.anyio


def traced(recorder: Recorder, *scripts: list[object]) -> Network:
    network, triage, faq, booking = team(*scripts)
    return Network(
        "airline",
        agents=[triage, faq, booking],
        state_schema=network.schema,
        telemetry=recorder.telemetry,
    )


async def test_a_handoff_is_a_span_under_its_tool_call_naming_both_agents_and_the_call() -> None:
    recorder = Recorder()
    network = traced(
        recorder, [call("transfer_to_seat_booking", reason="SECRET-REASON")], [], ["Done."]
    )

    result = await network.run("Move me to 12A")

    assert tree(recorder.spans) == [
        (
            "invoke_workflow airline",
            [
                (
                    "invoke_agent triage",
                    [
                        ("chat triage-model", []),
                        ("execute_tool transfer_to_seat_booking", [("handoff seat_booking", [])]),
                    ],
                ),
                ("invoke_agent seat_booking", [("chat booking-model", [])]),
            ],
        )
    ]
    span = recorder.only("handoff seat_booking")
    tool_span = recorder.only("execute_tool transfer_to_seat_booking")
    call_id = result.results[0].tool_calls[0].id
    assert dict(span.attributes) == {
        "agent_network.role": "handoff",
        "gen_ai.agent.name": "triage",
        "agent_network.handoff.source": "triage",
        "agent_network.handoff.target": "seat_booking",
        "gen_ai.tool.call.id": call_id,
    }
    assert span.parent.span_id == tool_span.context.span_id
    assert (span.start_time, span.end_time) == (tool_span.start_time, tool_span.end_time)
    assert span.status.status_code.name == "UNSET"
    # the model's reason is content: not recorded unless content is captured
    assert "SECRET-REASON" not in every_value(recorder.spans)


async def test_the_reason_is_recorded_when_content_is_captured() -> None:
    recorder = Recorder(capture_content=True)
    network = traced(recorder, [call("transfer_to_faq_agent", reason="bags")], ["Two."])

    await network.run("Bags?")

    tool_span = recorder.only("execute_tool transfer_to_faq_agent")
    assert tool_span.attributes["agent_network.handoff.reason"] == "bags"


async def test_a_refused_handoff_has_no_handoff_span_and_its_tool_span_failed() -> None:
    recorder = Recorder()

    def broken(ctx: object) -> None:
        raise RuntimeError("down")

    network, triage, faq, booking = team(
        [call("transfer_to_seat_booking"), "Sorry."], on_booking=broken
    )
    network = Network("airline", agents=[triage, faq, booking], telemetry=recorder.telemetry)

    await network.run("Move me")

    assert recorder.named("handoff seat_booking") == []
    failed = recorder.only("execute_tool transfer_to_seat_booking")
    assert failed.status.status_code.name == "ERROR"
