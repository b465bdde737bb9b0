"""The AG-UI encoding of a run's typed events (`network.run.events`): the wire at the edge.

`encode(event)` gives the `ag_ui.core` models of one event (built by `network.events`, so the
wire is the protocol package's own); `agui_sink(sink)` is a run's sink that hands `sink` those
models. A caller's `sinks=`, `network.stream`, the AG-UI server and the durable event log
read the run through it; nothing inside the library reads AG-UI models.

The mapping, typed event -> AG-UI event type (the models `network.events` builds):

- `RunStarted` -> RUN_STARTED (a traced run's ids in `metadata`); `RunFinished` -> RUN_FINISHED
  (`usage` an extra field when the run spent something); `RunInterrupted` -> RUN_FINISHED
  whose outcome lists the interrupts to answer; `RunCancelled` -> RUN_FINISHED with a
  cancelled outcome; `RunError` -> RUN_ERROR.
- `StepStarted` / `StepFinished` -> STEP_STARTED / STEP_FINISHED (`step_name`).
- `StateSnapshot` / `StateDelta` -> STATE_SNAPSHOT / STATE_DELTA.
- `TextStarted` / `TextContent` / `TextEnded` -> TEXT_MESSAGE_START (role "assistant") /
  TEXT_MESSAGE_CONTENT / TEXT_MESSAGE_END.
- `ReasoningStarted` -> REASONING_START then REASONING_MESSAGE_START (role "reasoning");
  `ReasoningContent` -> REASONING_MESSAGE_CONTENT; `ReasoningEnded` -> REASONING_MESSAGE_END
  then REASONING_END.
- `ToolCallStarted` / `ToolCallArgs` / `ToolCallEnded` -> TOOL_CALL_START / TOOL_CALL_ARGS /
  TOOL_CALL_END; `ToolResult` -> TOOL_CALL_RESULT.
- `SubagentStarted` / `SubagentFinished` / `SubagentError` -> SUBAGENT_STARTED /
  SUBAGENT_FINISHED (a suspended outcome when it waits on interrupts) / SUBAGENT_ERROR.
- `Handoff` -> CUSTOM named "Handoff", its value `{"sourceAgent", "targetAgent",
  "toolCallId", "reason"}`.
- `Custom`, and each `NamedCustom` (`ContextCompacted`, `MemoryRecalled`, `ToolCallRetry`,
  `ToolCallProgress`, `OutputInvalid`, `PredictState`) -> CUSTOM of its `name`, its `value`
  as it is.

Where an event happened rides on its models as AG-UI allows: `subagent_run_id` in the field
of that name; a fan-out's name (`fanOut`, on its STEP_STARTED / STEP_FINISHED) and a parallel
branch's id (`branch`, on every event of the branch) in the event's `metadata`, the object
AG-UI 1.0 leaves to the producer. (Fields of their own would be stripped by `@ag-ui/client`
1.0, which removes whatever the protocol does not define, warning once per event.)

Imported only when a run has such a sink, so `import network` does not pay for `ag_ui`.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

from network import events as agui
from network.run import events as ev

EventSink = Callable[[Any], Awaitable[None]]
FAN_OUT = "fanOut"  # metadata key: the fan-out a STEP_STARTED / STEP_FINISHED opens or closes
BRANCH = "branch"  # metadata key: the parallel branch an event belongs to

__all__ = ["agui_sink", "encode", "encode_json"]


def _one(model: Any) -> tuple[Any, ...]:
    return (model,)


def _run_started(e: ev.RunStarted) -> tuple[Any, ...]:
    return _one(agui.run_started(e.thread_id, e.run_id, e.trace_id, e.span_id))


def _extra(e: ev.RunFinished) -> dict[str, Any]:
    return {"usage": e.usage} if e.usage else {}


def _run_finished(e: ev.RunFinished) -> tuple[Any, ...]:
    return _one(agui.run_finished(e.thread_id, e.run_id, result=e.result, **_extra(e)))


def _run_interrupted(e: ev.RunInterrupted) -> tuple[Any, ...]:
    return _one(
        agui.run_interrupted(
            e.thread_id,
            e.run_id,
            [interrupt.to_agui() for interrupt in e.interrupts],
            result=e.result,
            **_extra(e),
        )
    )


def _run_cancelled(e: ev.RunCancelled) -> tuple[Any, ...]:
    return _one(agui.run_cancelled(e.thread_id, e.run_id))


def _run_error(e: ev.RunError) -> tuple[Any, ...]:
    return _one(agui.run_error(e.message, code=e.code))


def _step_started(e: ev.StepStarted) -> tuple[Any, ...]:
    return (_with_metadata(agui.step_started(e.name), FAN_OUT, e.fan_out),)


def _step_finished(e: ev.StepFinished) -> tuple[Any, ...]:
    return (_with_metadata(agui.step_finished(e.name), FAN_OUT, e.fan_out),)


def _with_metadata(model: Any, key: str, value: str | None) -> Any:
    """`model` with `value` under `key` in its `metadata` (kept as it was when None)."""
    if value is not None:
        model.metadata = {**(model.metadata or {}), key: value}
    return model


def _subagent_started(e: ev.SubagentStarted) -> tuple[Any, ...]:
    return _one(
        agui.subagent_started(
            e.subagent_run_id or "",
            e.name,
            description=e.description,
            parent_subagent_run_id=e.parent_subagent_run_id,
            parent_tool_call_id=e.parent_tool_call_id,
        )
    )


def _subagent_finished(e: ev.SubagentFinished) -> tuple[Any, ...]:
    return _one(agui.subagent_finished(e.subagent_run_id or "", e.result, e.interrupt_ids))


def _subagent_error(e: ev.SubagentError) -> tuple[Any, ...]:
    return _one(agui.subagent_error(e.subagent_run_id or "", e.message, e.code))


def _custom(e: Any) -> tuple[Any, ...]:
    return _one(agui.custom(e.name, e.value))


ENCODERS: dict[type[Any], Callable[[Any], tuple[Any, ...]]] = {
    ev.RunStarted: _run_started,
    ev.RunFinished: _run_finished,
    ev.RunInterrupted: _run_interrupted,
    ev.RunCancelled: _run_cancelled,
    ev.RunError: _run_error,
    ev.StepStarted: _step_started,
    ev.StepFinished: _step_finished,
    ev.StateSnapshot: lambda e: _one(agui.state_snapshot(e.snapshot)),
    ev.StateDelta: lambda e: _one(agui.state_delta(e.ops)),
    ev.TextStarted: lambda e: _one(agui.text_start(e.message_id, e.name)),
    ev.TextContent: lambda e: _one(agui.text_content(e.message_id, e.delta)),
    ev.TextEnded: lambda e: _one(agui.text_end(e.message_id)),
    ev.ReasoningStarted: lambda e: tuple(agui.reasoning_start(e.message_id)),
    ev.ReasoningContent: lambda e: _one(agui.reasoning_content(e.message_id, e.delta)),
    ev.ReasoningEnded: lambda e: tuple(agui.reasoning_end(e.message_id)),
    ev.ToolCallStarted: lambda e: _one(agui.tool_start(e.call_id, e.name, e.parent_message_id)),
    ev.ToolCallArgs: lambda e: _one(agui.tool_args(e.call_id, e.delta)),
    ev.ToolCallEnded: lambda e: _one(agui.tool_end(e.call_id)),
    ev.ToolResult: lambda e: _one(agui.tool_result(e.message_id, e.call_id, e.content)),
    ev.SubagentStarted: _subagent_started,
    ev.SubagentFinished: _subagent_finished,
    ev.SubagentError: _subagent_error,
    ev.Handoff: lambda e: _one(agui.handoff(e.source, e.target, e.tool_call_id, e.reason)),
    ev.Custom: _custom,
}
"""The encoding of each event class (a subclass of one is encoded as its nearest base)."""

_SUBAGENT_OWN = (ev.SubagentStarted, ev.SubagentFinished, ev.SubagentError)


def encode(event: ev.RunEvent) -> tuple[Any, ...]:
    """The AG-UI models of `event`, in wire order (most events are one model)."""
    encoder = ENCODERS.get(type(event))
    if encoder is None:
        encoder = _encoder_of(type(event))
    models = encoder(event)
    subagent, branch = event.subagent_run_id, event.branch
    if subagent is not None and not isinstance(event, _SUBAGENT_OWN):
        models = tuple(m.model_copy(update={"subagent_run_id": subagent}) for m in models)
    if branch is not None:
        for model in models:
            _with_metadata(model, BRANCH, branch)
    return models


def _encoder_of(kind: type[Any]) -> Callable[[Any], tuple[Any, ...]]:
    if issubclass(kind, ev.NamedCustom):
        return _custom
    for base in kind.__mro__[1:]:
        found = ENCODERS.get(base)
        if found is not None:
            return found
    raise TypeError(f"{kind.__name__} is not an event of a run (network.run.events)")


# -- the JSON form, without building models ---------------------------------------------------

JSON_FIELDS: dict[type[Any], tuple[str, tuple[tuple[str, str | None, str | None], ...]]] = {
    ev.StepStarted: (agui.EventType.STEP_STARTED.value, (("stepName", "name", None),)),
    ev.StepFinished: (agui.EventType.STEP_FINISHED.value, (("stepName", "name", None),)),
    ev.TextStarted: (
        agui.EventType.TEXT_MESSAGE_START.value,
        (("messageId", "message_id", None), ("role", None, "assistant"), ("name", "name", None)),
    ),
    ev.TextContent: (
        agui.EventType.TEXT_MESSAGE_CONTENT.value,
        (("messageId", "message_id", None), ("delta", "delta", None)),
    ),
    ev.TextEnded: (agui.EventType.TEXT_MESSAGE_END.value, (("messageId", "message_id", None),)),
    ev.ToolCallStarted: (
        agui.EventType.TOOL_CALL_START.value,
        (
            ("toolCallId", "call_id", None),
            ("toolCallName", "name", None),
            ("parentMessageId", "parent_message_id", None),
        ),
    ),
    ev.ToolCallArgs: (
        agui.EventType.TOOL_CALL_ARGS.value,
        (("toolCallId", "call_id", None), ("delta", "delta", None)),
    ),
    ev.ToolCallEnded: (agui.EventType.TOOL_CALL_END.value, (("toolCallId", "call_id", None),)),
    ev.ToolResult: (
        agui.EventType.TOOL_CALL_RESULT.value,
        (
            ("messageId", "message_id", None),
            ("toolCallId", "call_id", None),
            ("content", "content", None),
            ("role", None, "tool"),
        ),
    ),
}
"""The events of one wire event whose fields are all strings (most of a run's events), as
that event's JSON keys in the models' order: (key, the typed event's attribute or None, a
constant value). `encode_json` writes these directly; every other event, and one of these
holding a value that is not a string, goes through the models."""


def encode_json(event: ev.RunEvent) -> list[dict[str, Any]]:
    """The AG-UI JSON of `event`: what `encode(event)`'s models dump to (by alias, without
    None), in the same key order. The commonest events are written without building a model
    (a model's dump costs ten times the dict); tests/network/run/test_agui_encoder.py checks
    the two forms agree for every event class."""
    kind = type(event)
    spec = JSON_FIELDS.get(kind)
    data = (
        _plain_json(event, *spec)
        if spec is not None
        else _state_delta_json(event)
        if isinstance(event, ev.StateDelta) and kind is ev.StateDelta
        else None
    )
    if data is not None:
        return [data]
    return [
        model.model_dump(mode="json", by_alias=True, exclude_none=True) for model in encode(event)
    ]


def _plain_json(
    event: Any, wire_type: str, fields: tuple[tuple[str, str | None, str | None], ...]
) -> dict[str, Any] | None:
    """`event`'s JSON from its `JSON_FIELDS` entry; None when a value is not a string, or a
    field the models require is None (the models then say what becomes of it)."""
    data: dict[str, Any] = {"type": wire_type}
    fan_out, branch = getattr(event, "fan_out", None), event.branch
    if fan_out is not None or branch is not None:  # the models' place for them: after `type`
        metadata = data["metadata"] = {}
        for key, value in ((FAN_OUT, fan_out), (BRANCH, branch)):
            if type(value) is str:
                metadata[key] = value
            elif value is not None:
                return None
    subagent = event.subagent_run_id
    if subagent is not None:
        if type(subagent) is not str:
            return None
        data["subagentRunId"] = subagent
    for key, name, constant in fields:
        value = constant if name is None else getattr(event, name)
        if type(value) is str:
            data[key] = value
        elif value is not None or key not in OPTIONAL_KEYS:
            return None
    return data


OPTIONAL_KEYS = frozenset({"subagentRunId", "parentMessageId", "name"})
"""The keys of `JSON_FIELDS`' events that the models leave out when None."""

PATCH_KEYS = {
    "add": ("op", "path", "value"),
    "replace": ("op", "path", "value"),
    "test": ("op", "path", "value"),
    "remove": ("op", "path"),
    "move": ("op", "from", "path"),
    "copy": ("op", "from", "path"),
}
"""A JSON Patch operation's keys, in the order its model dumps them."""


class _NotPlain(Exception):
    """A value the models would convert (a tuple, a NaN, a date...): theirs to write."""


def _state_delta_json(event: ev.StateDelta) -> dict[str, Any] | None:
    """A STATE_DELTA's JSON, when every operation is one the models pass through as it is
    (its own keys, plain JSON values, a value that is not None); None otherwise."""
    if event.subagent_run_id is not None or event.branch is not None:
        return None
    try:
        delta = [_patch_json(op) for op in event.ops]
    except _NotPlain:
        return None
    return {"type": agui.EventType.STATE_DELTA.value, "delta": delta}


def _patch_json(op: Any) -> dict[str, Any]:
    keys = PATCH_KEYS.get(str(op.get("op"))) if type(op) is dict else None
    if keys is None or len(op) != len(keys):
        raise _NotPlain
    written = {}
    for key in keys:
        if key not in op:
            raise _NotPlain
        written[key] = _plain_copy(op[key])
    if written.get("value", 0) is None or any(
        type(written.get(key, "")) is not str for key in ("path", "from")
    ):
        raise _NotPlain
    return written


def _plain_copy(value: Any) -> Any:
    """A copy of `value` when it is JSON data the models write unchanged (str, int, bool,
    finite float, None, lists, dicts of str keys); else `_NotPlain`."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if value != value or value in (math.inf, -math.inf):
            raise _NotPlain
        return value
    if kind is list:
        return [_plain_copy(item) for item in value]
    if kind is dict:
        copied = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            copied[key] = _plain_copy(item)
        return copied
    raise _NotPlain


def agui_sink(sink: EventSink) -> EventSink:
    """A run's sink handing `sink` the AG-UI models of each event, one at a time."""

    async def encoded(event: Any) -> None:
        for model in encode(event):
            await sink(model)

    return encoded
