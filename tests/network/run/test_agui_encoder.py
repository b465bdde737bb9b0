"""The AG-UI encoding of a run's typed events: the wire, byte for byte as AG-UI clients read it.

Every event class encodes; where an event happened (a sub-agent run, a parallel branch, a
fan-out) rides on the models as the AG-UI server has always sent it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from ag_ui.encoder import EventEncoder

from network.events import HandoffEvent
from network.run import events as ev
from network.run.agui_encoder import ENCODERS, encode
from network.run.interrupts import Interrupt
from tests.network.run.test_events import EVENT_CLASSES


def wire(event: ev.RunEvent) -> list[dict[str, Any]]:
    """The SSE frames' JSON, as the AG-UI server writes them."""
    encoder = EventEncoder()
    frames = [encoder.encode(model) for model in encode(event)]
    return [json.loads(frame.removeprefix("data: ")) for frame in frames]


def test_every_event_class_has_an_encoding() -> None:
    abstract = {ev.RunEvent, ev.NamedCustom}
    unencoded = [
        cls.__name__
        for cls in EVENT_CLASSES
        if cls not in abstract and cls not in ENCODERS and not issubclass(cls, ev.NamedCustom)
    ]
    assert unencoded == []


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (
            ev.RunStarted("t1", "r1", "ab" * 16, "cd" * 8),
            [
                {
                    "type": "RUN_STARTED",
                    "metadata": {"traceId": "ab" * 16, "spanId": "cd" * 8},
                    "threadId": "t1",
                    "runId": "r1",
                    "protocolVersion": "1.0",
                }
            ],
        ),
        (
            ev.RunFinished("t1", "r1", {"output": "hi", "stopReason": "done"}),
            [
                {
                    "type": "RUN_FINISHED",
                    "threadId": "t1",
                    "runId": "r1",
                    "result": {"output": "hi", "stopReason": "done"},
                }
            ],
        ),
        (
            ev.RunCancelled("t1", "r1"),
            [
                {
                    "type": "RUN_FINISHED",
                    "threadId": "t1",
                    "runId": "r1",
                    "outcome": {"type": "cancelled"},
                }
            ],
        ),
        (ev.RunError("boom", "X"), [{"type": "RUN_ERROR", "message": "boom", "code": "X"}]),
        (
            ev.StepStarted("a+b", fan_out="a+b"),
            [{"type": "STEP_STARTED", "stepName": "a+b", "fan_out": "a+b"}],
        ),
        (
            ev.TextContent("m1", "hel", subagent_run_id="sub_1", branch="a+b/a"),
            [
                {
                    "type": "TEXT_MESSAGE_CONTENT",
                    "subagentRunId": "sub_1",
                    "messageId": "m1",
                    "delta": "hel",
                    "branch": "a+b/a",
                }
            ],
        ),
        (
            ev.ReasoningStarted("m2"),
            [
                {"type": "REASONING_START", "messageId": "m2"},
                {"type": "REASONING_MESSAGE_START", "messageId": "m2", "role": "reasoning"},
            ],
        ),
        (
            ev.ReasoningEnded("m2"),
            [
                {"type": "REASONING_MESSAGE_END", "messageId": "m2"},
                {"type": "REASONING_END", "messageId": "m2"},
            ],
        ),
        (
            ev.ToolResult("c1:result", "c1", "42"),
            [
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": "c1:result",
                    "toolCallId": "c1",
                    "content": "42",
                    "role": "tool",
                }
            ],
        ),
        (
            ev.StateDelta([{"op": "add", "path": "/x", "value": 1}]),
            [{"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/x", "value": 1}]}],
        ),
        (
            ev.SubagentStarted("helper", parent_tool_call_id="c1", subagent_run_id="sub_1"),
            [
                {
                    "type": "SUBAGENT_STARTED",
                    "subagentRunId": "sub_1",
                    "name": "helper",
                    "parentToolCallId": "c1",
                }
            ],
        ),
        (
            ev.SubagentFinished(interrupt_ids=["i1"], subagent_run_id="sub_1"),
            [
                {
                    "type": "SUBAGENT_FINISHED",
                    "subagentRunId": "sub_1",
                    "outcome": {"type": "suspended", "interruptIds": ["i1"]},
                }
            ],
        ),
        (
            ev.ToolCallRetry({"attempt": 1}),
            [{"type": "CUSTOM", "name": "TOOL_CALL_RETRY", "value": {"attempt": 1}}],
        ),
        (
            ev.Custom("agent_network.router_choice", {"agent": "a"}),
            [{"type": "CUSTOM", "name": "agent_network.router_choice", "value": {"agent": "a"}}],
        ),
    ],
)
def test_events_encode_to_the_agui_wire(event: ev.RunEvent, expected: list[Any]) -> None:
    assert wire(event) == expected


def test_a_handoff_is_the_typed_custom_event_clients_and_callers_know() -> None:
    (model,) = encode(ev.Handoff("triage", "faq", "call_7", "bags"))
    assert isinstance(model, HandoffEvent) and model.target_agent == "faq"
    assert wire(ev.Handoff("triage", "faq", "call_7", "bags")) == [
        {
            "type": "CUSTOM",
            "name": "Handoff",
            "value": {
                "sourceAgent": "triage",
                "targetAgent": "faq",
                "toolCallId": "call_7",
                "reason": "bags",
            },
        }
    ]


def test_an_interrupted_run_finishes_with_its_interrupts_as_agui_interrupts() -> None:
    interrupt = Interrupt(
        id="int_1",
        reason="confirmation",
        message="Send it?",
        tool_call_id="c1",
        tool="send",
        agent="mailer",
        arguments={"to": "x"},
    )
    (frame,) = wire(ev.RunInterrupted("t1", "r1", None, None, [interrupt]))
    assert frame["type"] == "RUN_FINISHED" and frame["outcome"]["type"] == "interrupt"
    (shown,) = frame["outcome"]["interrupts"]
    assert shown["id"] == "int_1" and shown["toolCallId"] == "c1"
    assert shown["metadata"]["tool"] == "send" and shown["metadata"]["agent"] == "mailer"


def test_an_object_that_is_no_event_of_a_run_is_refused() -> None:
    with pytest.raises(TypeError, match="not an event of a run"):
        encode(object())  # type: ignore[arg-type]
