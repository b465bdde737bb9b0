"""The AG-UI event builders of `network.events`."""

from __future__ import annotations

import json

from ag_ui.core import CustomEvent, EventType

from network import events


def test_a_handoff_event_names_source_target_and_call_as_a_plain_custom_event() -> None:
    event = events.handoff("triage", "faq", "call_7", reason="a question about bags")

    assert isinstance(event, events.HandoffEvent)
    assert isinstance(event, CustomEvent)
    assert (event.source_agent, event.target_agent, event.tool_call_id) == (
        "triage",
        "faq",
        "call_7",
    )
    assert event.reason == "a question about bags"
    wire = json.loads(event.model_dump_json(by_alias=True, exclude_none=True))
    assert wire == {
        "type": "CUSTOM",
        "name": events.HANDOFF_EVENT,
        "value": {
            "sourceAgent": "triage",
            "targetAgent": "faq",
            "toolCallId": "call_7",
            "reason": "a question about bags",
        },
    }
    # a client that knows nothing of handoffs reads it as any CUSTOM event
    again = CustomEvent.model_validate(wire)
    assert again.type == EventType.CUSTOM and again.value["targetAgent"] == "faq"
