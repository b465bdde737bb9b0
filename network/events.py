"""Builders of AG-UI events (the `ag-ui-protocol` models; never hand-written JSON).

Imported only when a run has a sink, so `import network` does not pay for `ag_ui`.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import (
    CustomEvent,
    EventType,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentFinishedSuspendedOutcome,
    SubagentStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

try:
    from ag_ui.core.version import PROTOCOL_VERSION
except ImportError:  # older packages
    PROTOCOL_VERSION = "1.0"

__all__ = [
    "HANDOFF_EVENT",
    "PROTOCOL_VERSION",
    "CustomEvent",
    "EventType",
    "HandoffEvent",
    "custom",
    "handoff",
    "reasoning_content",
    "reasoning_end",
    "reasoning_start",
    "run_cancelled",
    "run_error",
    "run_finished",
    "run_interrupted",
    "run_started",
    "state_delta",
    "state_snapshot",
    "step_finished",
    "step_started",
    "subagent_error",
    "subagent_finished",
    "subagent_started",
    "text_content",
    "text_end",
    "text_start",
    "tool_args",
    "tool_end",
    "tool_result",
    "tool_start",
]


def run_started(
    thread_id: str, run_id: str, trace_id: str | None = None, span_id: str | None = None
) -> RunStartedEvent:
    """RUN_STARTED; a traced run's OpenTelemetry ids ride in `metadata` (traceId, spanId)."""
    metadata = {"traceId": trace_id, "spanId": span_id} if trace_id is not None else None
    return RunStartedEvent(
        thread_id=thread_id, run_id=run_id, protocol_version=PROTOCOL_VERSION, metadata=metadata
    )


def run_finished(thread_id: str, run_id: str, result: Any = None, **extra: Any) -> RunFinishedEvent:
    return RunFinishedEvent(thread_id=thread_id, run_id=run_id, result=result, **extra)


def run_error(message: str, code: str | None = None) -> RunErrorEvent:
    return RunErrorEvent(message=message, code=code)


def state_snapshot(snapshot: dict[str, Any]) -> StateSnapshotEvent:
    return StateSnapshotEvent(snapshot=snapshot)


def state_delta(ops: list[dict[str, Any]]) -> StateDeltaEvent:
    # The SDK validates each op dict into its JSON Patch operation models.
    return StateDeltaEvent(delta=list(ops))  # type: ignore[arg-type]


def step_started(name: str) -> StepStartedEvent:
    return StepStartedEvent(step_name=name)


def step_finished(name: str) -> StepFinishedEvent:
    return StepFinishedEvent(step_name=name)


def text_start(message_id: str, name: str | None = None) -> TextMessageStartEvent:
    return TextMessageStartEvent(message_id=message_id, role="assistant", name=name)


def text_content(message_id: str, delta: str) -> TextMessageContentEvent:
    return TextMessageContentEvent(message_id=message_id, delta=delta)


def text_end(message_id: str) -> TextMessageEndEvent:
    return TextMessageEndEvent(message_id=message_id)


def reasoning_start(message_id: str) -> list[Any]:
    """REASONING_START then REASONING_MESSAGE_START: a reasoning model starts thinking aloud.

    AG-UI 1.0's reasoning events (which replaced THINKING_*); the reasoning is a message of its
    own (role "reasoning"), before the answer it leads to.
    """
    return [
        ReasoningStartEvent(message_id=message_id),
        ReasoningMessageStartEvent(message_id=message_id, role="reasoning"),
    ]


def reasoning_content(message_id: str, delta: str) -> ReasoningMessageContentEvent:
    return ReasoningMessageContentEvent(message_id=message_id, delta=delta)


def reasoning_end(message_id: str) -> list[Any]:
    """REASONING_MESSAGE_END then REASONING_END."""
    return [
        ReasoningMessageEndEvent(message_id=message_id),
        ReasoningEndEvent(message_id=message_id),
    ]


def tool_start(call_id: str, name: str, parent_message_id: str | None) -> ToolCallStartEvent:
    return ToolCallStartEvent(
        tool_call_id=call_id, tool_call_name=name, parent_message_id=parent_message_id
    )


def tool_args(call_id: str, delta: str) -> ToolCallArgsEvent:
    return ToolCallArgsEvent(tool_call_id=call_id, delta=delta)


def tool_end(call_id: str) -> ToolCallEndEvent:
    return ToolCallEndEvent(tool_call_id=call_id)


def tool_result(message_id: str, call_id: str, content: str) -> ToolCallResultEvent:
    return ToolCallResultEvent(
        message_id=message_id, tool_call_id=call_id, content=content, role="tool"
    )


def custom(name: str, value: Any) -> CustomEvent:
    return CustomEvent(name=name, value=value)


HANDOFF_EVENT = "Handoff"
"""The name of the CUSTOM event a handoff sends (`HandoffEvent`)."""


class HandoffEvent(CustomEvent):
    """CUSTOM `Handoff`: an agent handed the conversation to another (`agents.handoff`).

    On the wire it is a plain AG-UI CUSTOM event whose value is `{"sourceAgent",
    "targetAgent", "toolCallId", "reason"}`; in the process, `source_agent`, `target_agent`
    and `tool_call_id` read it typed. It comes after the `transfer_to_...` call's
    TOOL_CALL_RESULT and before the source agent's STEP_FINISHED.
    """

    name: str = HANDOFF_EVENT

    @property
    def source_agent(self) -> str:
        """The agent that handed off."""
        return str(self.value["sourceAgent"])

    @property
    def target_agent(self) -> str:
        """The agent that has the conversation now."""
        return str(self.value["targetAgent"])

    @property
    def tool_call_id(self) -> str:
        """The id of the `transfer_to_...` tool call that made the handoff."""
        return str(self.value["toolCallId"])

    @property
    def reason(self) -> str:
        """Why, as the model said it (empty when it said nothing)."""
        return str(self.value.get("reason") or "")


def handoff(source: str, target: str, tool_call_id: str, reason: str = "") -> HandoffEvent:
    """The `HandoffEvent` of `source` handing the conversation to `target`."""
    value = {
        "sourceAgent": source,
        "targetAgent": target,
        "toolCallId": tool_call_id,
        "reason": reason,
    }
    return HandoffEvent(name=HANDOFF_EVENT, value=value)


def run_interrupted(
    thread_id: str,
    run_id: str,
    interrupts: list[dict[str, Any]],
    result: Any = None,
    **extra: Any,
) -> RunFinishedEvent:
    """RUN_FINISHED whose outcome asks the client to answer `interrupts` (AG-UI `Interrupt`s)."""
    outcome = RunFinishedInterruptOutcome(interrupts=[Interrupt(**i) for i in interrupts])
    return RunFinishedEvent(
        thread_id=thread_id, run_id=run_id, result=result, outcome=outcome, **extra
    )


def run_cancelled(thread_id: str, run_id: str) -> RunFinishedEvent:
    """RUN_FINISHED for a run stopped from outside (cancelled), which did not fail."""
    return RunFinishedEvent(
        thread_id=thread_id, run_id=run_id, outcome=RunFinishedCancelledOutcome()
    )


def subagent_started(
    subagent_run_id: str,
    name: str,
    *,
    description: str | None = None,
    parent_subagent_run_id: str | None = None,
    parent_tool_call_id: str | None = None,
) -> SubagentStartedEvent:
    """SUBAGENT_STARTED: a sub-agent's run begins (AG-UI 1.0). What it does afterwards carries
    its `subagent_run_id`; `parent_tool_call_id` is the tool call that started it, and
    `parent_subagent_run_id` the sub-agent that call belongs to (nested sub-agents)."""
    return SubagentStartedEvent(
        subagent_run_id=subagent_run_id,
        name=name,
        description=description or None,
        parent_subagent_run_id=parent_subagent_run_id,
        parent_tool_call_id=parent_tool_call_id,
    )


def subagent_finished(
    subagent_run_id: str, result: Any = None, interrupt_ids: list[str] | None = None
) -> SubagentFinishedEvent:
    """SUBAGENT_FINISHED: its work is done (`result`), or, with `interrupt_ids`, suspended until
    those interrupts are answered (a later run continues the same sub-agent run)."""
    outcome = (
        None
        if interrupt_ids is None
        else SubagentFinishedSuspendedOutcome(interrupt_ids=list(interrupt_ids))
    )
    return SubagentFinishedEvent(subagent_run_id=subagent_run_id, result=result, outcome=outcome)


def subagent_error(
    subagent_run_id: str, message: str, code: str | None = None
) -> SubagentErrorEvent:
    """SUBAGENT_ERROR: the sub-agent's run failed; the parent run may go on."""
    return SubagentErrorEvent(subagent_run_id=subagent_run_id, message=message, code=code)
