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
            [{"type": "STEP_STARTED", "metadata": {"fanOut": "a+b"}, "stepName": "a+b"}],
        ),
        (
            ev.TextContent("m1", "hel", subagent_run_id="sub_1", branch="a+b/a"),
            [
                {
                    "type": "TEXT_MESSAGE_CONTENT",
                    "metadata": {"branch": "a+b/a"},
                    "subagentRunId": "sub_1",
                    "messageId": "m1",
                    "delta": "hel",
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


def model_json(event: ev.RunEvent) -> list[dict[str, Any]]:
    """The models' JSON, as the durable event log stored it before `encode_json`."""
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in encode(event)]


WHERE = [
    {},
    {"branch": "a+b/a"},
    {"subagent_run_id": "sub_1"},
    {"branch": "x", "subagent_run_id": "s"},
]
PLAIN_EVENTS = [
    ev.StepStarted("writer"),
    ev.StepStarted("a+b", fan_out="a+b"),
    ev.StepFinished("writer"),
    ev.StepFinished("a+b", fan_out="a+b"),
    ev.TextStarted("m1"),
    ev.TextStarted("m1", "writer"),
    ev.TextContent("m1", "hel"),
    ev.TextContent("m1", ""),
    ev.TextEnded("m1"),
    ev.ToolCallStarted("c1", "save"),
    ev.ToolCallStarted("c1", "save", "m1"),
    ev.ToolCallArgs("c1", '{"text": "é\\n"}'),
    ev.ToolCallEnded("c1"),
    ev.ToolResult("c1:result", "c1", "saved"),
]


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("event", PLAIN_EVENTS, ids=lambda e: type(e).__name__)
def test_the_json_form_is_the_models_dump_key_for_key(
    event: ev.RunEvent, where: dict[str, str]
) -> None:
    import dataclasses

    from network.run.agui_encoder import JSON_FIELDS, encode_json

    assert type(event) in JSON_FIELDS  # written without a model
    event = dataclasses.replace(event, **where)
    assert json.dumps(encode_json(event)) == json.dumps(model_json(event))  # same key order


def test_every_event_class_has_the_json_form_of_its_models() -> None:
    from network.run.agui_encoder import JSON_FIELDS, encode_json

    interrupt = Interrupt(
        id="i1", reason="confirmation", message="ok?", tool_call_id="c1", tool="t", agent="a"
    )
    samples = [
        ev.RunStarted("t1", "r1"),
        ev.RunFinished("t1", "r1", {"output": "hi"}, [{"model": "m", "totalTokens": 3}]),
        ev.RunInterrupted("t1", "r1", None, None, [interrupt]),
        ev.RunCancelled("t1", "r1"),
        ev.RunError("boom"),
        ev.StateSnapshot({"x": [1, 2.5, None]}),
        ev.StateDelta([{"op": "add", "path": "/x", "value": float("nan")}]),
        ev.ReasoningStarted("m2"),
        ev.ReasoningContent("m2", "hmm"),
        ev.ReasoningEnded("m2"),
        ev.SubagentStarted("helper", subagent_run_id="sub_1"),
        ev.SubagentFinished({"output": "x"}, subagent_run_id="sub_1"),
        ev.SubagentError("failed", subagent_run_id="sub_1"),
        ev.Handoff("triage", "faq", "call_7", "bags"),
        ev.Custom("mine", {"a": 1}),
        ev.ToolCallRetry({"attempt": 1}),
        *PLAIN_EVENTS,
    ]
    covered = {type(event) for event in samples}
    assert covered >= set(ENCODERS) - {ev.RunEvent} and set(JSON_FIELDS) <= covered
    for event in samples:
        assert json.dumps(encode_json(event)) == json.dumps(model_json(event)), event


def test_a_value_the_json_form_cannot_vouch_for_goes_through_the_models() -> None:
    from pydantic import ValidationError

    from network.run.agui_encoder import encode_json

    # a non-string where the wire wants one, or a required field missing: refused as before
    for event in (ev.ToolCallArgs("c1", 42), ev.ToolCallEnded(None)):  # type: ignore[arg-type]
        with pytest.raises(ValidationError):
            model_json(event)
        with pytest.raises(ValidationError):
            encode_json(event)
    # a result of content parts, an extra field that is not a string: the models write them
    parts = [{"type": "text", "text": "hi"}]
    converted: list[ev.RunEvent] = [ev.ToolResult("m", "c1", parts), ev.StepStarted("s", 7)]  # type: ignore[arg-type]
    for other in converted:
        assert json.dumps(encode_json(other)) == json.dumps(model_json(other))
    assert encode_json(ev.ToolResult("m", "c1", parts))[0]["content"] == parts  # type: ignore[arg-type]


NESTED: dict[str, Any] = {"a": [1, -2.5, True, None, "x", {"b": []}], "c": {}}
DELTAS = [
    [{"op": "add", "path": "/x", "value": 1}],
    [{"op": "replace", "path": "/items", "value": ["x"]}, {"op": "remove", "path": "/y"}],
    [{"path": "/x", "value": NESTED, "op": "test"}],  # written in the models' key order
    [{"op": "move", "from": "/a", "path": "/b"}, {"op": "copy", "path": "/c", "from": "/b"}],
    # what the models convert or refuse: left to them
    [{"op": "add", "path": "/x", "value": None}],
    [{"op": "add", "path": "/x", "value": (1, 2)}],
    [{"op": "add", "path": "/x", "value": {"n": float("nan")}}],
    [{"op": "add", "path": "/x", "value": {1: "one"}}],
    [{"op": "add", "path": "/x", "value": 1, "extra": 2}],
    [{"op": "add", "path": 3, "value": 1}],
]


@pytest.mark.parametrize("where", [{}, {"branch": "a+b/a"}])
@pytest.mark.parametrize("ops", DELTAS)
def test_a_state_deltas_json_is_the_models_dump(ops: list[Any], where: dict[str, str]) -> None:
    from network.run.agui_encoder import encode_json

    event = ev.StateDelta(ops, **where)
    try:
        expected = json.dumps(model_json(event))
    except Exception as refused:  # the models refuse it: so does the JSON form
        with pytest.raises(type(refused)):
            encode_json(event)
    else:
        assert json.dumps(encode_json(event)) == expected


def test_a_state_deltas_json_is_a_copy_of_the_values() -> None:
    from network.run.agui_encoder import encode_json

    value = {"items": ["x"]}
    (written,) = encode_json(ev.StateDelta([{"op": "add", "path": "/s", "value": value}]))
    value["items"].append("later")  # the run goes on changing its state
    assert written["delta"] == [{"op": "add", "path": "/s", "value": {"items": ["x"]}}]


@pytest.mark.parametrize("ops", DELTAS[:4])
def test_a_plain_state_delta_is_written_without_a_model(
    ops: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from network.run import agui_encoder

    monkeypatch.setattr(agui_encoder, "encode", None)  # the models' path would fail
    assert agui_encoder.encode_json(ev.StateDelta(ops))[0]["type"] == "STATE_DELTA"
