"""A strict AG-UI consumer for tests: checks event order and applies state as a client does.

It checks what the official client enforces (first event, open/close pairing, nothing after
the end) and what it only warns about (RUN_ERROR, a stream cut short, mismatched ids, a
STATE_DELTA that does not apply), so a test fails on any of them.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jsonpatch  # type: ignore[import-untyped]
from ag_ui.encoder import EventEncoder

if TYPE_CHECKING:
    import httpx


def wire(events: list[Any]) -> list[dict[str, Any]]:
    """The events as a client receives them: encoded frames, parsed back."""
    encoder = EventEncoder()
    out = []
    for event in events:
        frame = encoder.encode(event)
        assert frame.startswith("data: ") and frame.endswith("\n\n") and "\r" not in frame
        out.append(json.loads(frame[len("data: ") :]))
    return out


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Events of a `text/event-stream` body (LF framing only)."""
    assert "\r" not in text, "frames must use LF only"
    frames = [frame for frame in text.split("\n\n") if frame]
    out = []
    for frame in frames:
        assert frame.startswith("data: "), frame
        out.append(json.loads(frame[len("data: ") :]))
    return out


def events(response: httpx.Response) -> list[dict[str, Any]]:
    """The events of a run's response, which must have succeeded (its body when it did not)."""
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


def of(stream: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The events of `stream` of one type (`"TOOL_CALL_START"`), in order."""
    return [event for event in stream if event["type"] == kind]


@dataclass
class Replay:
    """What a client ends up with after a stream."""

    events: list[dict[str, Any]]
    state: dict[str, Any]
    types: list[str] = field(default_factory=list)
    finished: Any = None  # the RUN_FINISHED event
    error: Any = None  # the RUN_ERROR event

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event["type"] == kind]


def replay(
    events: list[dict[str, Any]],
    *,
    state: dict[str, Any] | None = None,
    thread_id: str | None = None,
    run_id: str | None = None,
    allow_error: bool = False,
) -> Replay:
    """Check `events` (wire dicts) as one run and apply its state changes to `state`."""
    assert events, "empty stream"
    current = copy.deepcopy(state or {})
    first = events[0]
    assert first["type"] in ("RUN_STARTED", "RUN_ERROR"), f"first event is {first['type']}"
    if first["type"] == "RUN_STARTED":
        assert first.get("protocolVersion"), "RUN_STARTED without protocolVersion"
        if thread_id is not None:
            assert first["threadId"] == thread_id
        if run_id is not None:
            assert first["runId"] == run_id
    messages: set[str] = set()
    tools: set[str] = set()
    steps: list[str] = []
    result = Replay(events, current)
    for index, event in enumerate(events):
        kind = event["type"]
        result.types.append(kind)
        if result.finished is not None or result.error is not None:
            raise AssertionError(f"{kind} after the end of the run (event {index})")
        if kind == "TEXT_MESSAGE_START":
            assert event["messageId"] not in messages
            messages.add(event["messageId"])
        elif kind in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"):
            assert event["messageId"] in messages, f"{kind} for a message that is not open"
            if kind == "TEXT_MESSAGE_END":
                messages.remove(event["messageId"])
        elif kind == "TOOL_CALL_START":
            assert event["toolCallId"] not in tools
            tools.add(event["toolCallId"])
        elif kind in ("TOOL_CALL_ARGS", "TOOL_CALL_END"):
            assert event["toolCallId"] in tools, f"{kind} for a tool call that is not open"
            if kind == "TOOL_CALL_END":
                tools.remove(event["toolCallId"])
        elif kind == "STEP_STARTED":
            steps.append(event["stepName"])
        elif kind == "STEP_FINISHED":
            assert event["stepName"] in steps, f"STEP_FINISHED {event['stepName']} not started"
            steps.remove(event["stepName"])
        elif kind == "STATE_SNAPSHOT":
            current = copy.deepcopy(event["snapshot"])
        elif kind == "STATE_DELTA":
            for op in event["delta"]:
                assert op["path"].startswith("/"), op
            try:
                current = jsonpatch.apply_patch(current, event["delta"])
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                msg = f"STATE_DELTA does not apply: {event['delta']}: {exc}"
                raise AssertionError(msg) from exc
        elif kind == "RUN_FINISHED":
            assert not messages and not tools and not steps, (
                f"RUN_FINISHED with open messages={messages} tools={tools} steps={steps}"
            )
            if thread_id is not None:
                assert event["threadId"] == thread_id
            if run_id is not None:
                assert event["runId"] == run_id
            result.finished = event
        elif kind == "RUN_ERROR":
            assert allow_error, f"RUN_ERROR: {event.get('message')}"
            result.error = event
    assert result.finished is not None or result.error is not None, "stream cut short"
    result.state = current
    return result
