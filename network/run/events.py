"""The events of a run, typed: what the run emits and the library's own consumers read.

One class per thing that happens in a run. The run builds them only when its emitter has a
sink (`Emitter.active`), so a plain run pays nothing for them; they are slotted dataclasses,
cheap to make, with no validation (the run made their values). Thread persistence,
telemetry, logs, the durable event log, the dev UI and the protocol servers dispatch on their
classes (`isinstance`, `match`), never on a type string.

They say what happened, in the library's words. A protocol's encoder turns them into its
wire and documents which wire event each becomes: `network.run.agui_encoder` for AG-UI, which
a caller's `sinks=`, `network.stream` and the AG-UI server read.

Every event may carry where it happened, beyond its own fields: `branch` (the `Parallel`
branch that emitted it) and `subagent_run_id` (the sub-agent run it belongs to; for the
`Subagent*` events, the sub-agent run they are about).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from network.run.interrupts import Interrupt

__all__ = [
    "ContextCompacted",
    "Custom",
    "Handoff",
    "MemoryRecalled",
    "NamedCustom",
    "OutputInvalid",
    "PredictState",
    "ReasoningContent",
    "ReasoningEnded",
    "ReasoningStarted",
    "RunCancelled",
    "RunError",
    "RunEvent",
    "RunFinished",
    "RunInterrupted",
    "RunStarted",
    "StateDelta",
    "StateSnapshot",
    "StepFinished",
    "StepStarted",
    "SubagentError",
    "SubagentFinished",
    "SubagentStarted",
    "TextContent",
    "TextEnded",
    "TextStarted",
    "ToolCallArgs",
    "ToolCallEnded",
    "ToolCallProgress",
    "ToolCallRetry",
    "ToolCallStarted",
    "ToolResult",
]


@dataclass(slots=True)
class RunEvent:
    """What every event of a run has: where it happened (see the module docstring)."""

    branch: str | None = field(default=None, kw_only=True)
    subagent_run_id: str | None = field(default=None, kw_only=True)


# -- the run ----------------------------------------------------------------------------------


@dataclass(slots=True)
class RunStarted(RunEvent):
    """The run began; a traced run carries its OpenTelemetry ids."""

    thread_id: str
    run_id: str
    trace_id: str | None = None
    span_id: str | None = None


@dataclass(slots=True)
class RunFinished(RunEvent):
    """The run ended: `result` is `{"output", "stopReason"[, "summary"]}`; `usage` the
    tokens it spent per provider and model (None when it spent nothing)."""

    thread_id: str
    run_id: str
    result: Any = None
    usage: Any = None


@dataclass(slots=True)
class RunInterrupted(RunFinished):
    """The run ended waiting for answers to its `interrupts`."""

    interrupts: list[Interrupt] = field(default_factory=list)


@dataclass(slots=True)
class RunCancelled(RunFinished):
    """The run was stopped from outside (cancelled); it did not fail (no result, no usage)."""


@dataclass(slots=True)
class RunError(RunEvent):
    """The run failed; nothing follows."""

    message: str
    code: str | None = None


# -- steps and state --------------------------------------------------------------------------


@dataclass(slots=True)
class StepStarted(RunEvent):
    """An agent call (or a `Parallel` fan-out, named in `fan_out`) began."""

    name: str
    fan_out: str | None = None


@dataclass(slots=True)
class StepFinished(RunEvent):
    """An agent call (or a fan-out) ended."""

    name: str
    fan_out: str | None = None


@dataclass(slots=True)
class StateSnapshot(RunEvent):
    """The whole shared state, as JSON data."""

    snapshot: dict[str, Any]


@dataclass(slots=True)
class StateDelta(RunEvent):
    """JSON Patch operations (dicts) on the state since the previous snapshot or delta."""

    ops: list[dict[str, Any]]


# -- what a model says ------------------------------------------------------------------------


@dataclass(slots=True)
class TextStarted(RunEvent):
    """An assistant message began (`name`: the agent speaking)."""

    message_id: str
    name: str | None = None


@dataclass(slots=True)
class TextContent(RunEvent):
    """A piece of an assistant message's text."""

    message_id: str
    delta: str


@dataclass(slots=True)
class TextEnded(RunEvent):
    """An assistant message is complete."""

    message_id: str


@dataclass(slots=True)
class ReasoningStarted(RunEvent):
    """A reasoning model began thinking aloud (a reasoning message of its own id)."""

    message_id: str


@dataclass(slots=True)
class ReasoningContent(RunEvent):
    """A piece of the reasoning."""

    message_id: str
    delta: str


@dataclass(slots=True)
class ReasoningEnded(RunEvent):
    """The reasoning is complete."""

    message_id: str


# -- tool calls -------------------------------------------------------------------------------


@dataclass(slots=True)
class ToolCallStarted(RunEvent):
    """A model began a tool call (of the message `parent_message_id`)."""

    call_id: str
    name: str
    parent_message_id: str | None = None


@dataclass(slots=True)
class ToolCallArgs(RunEvent):
    """A piece of a tool call's JSON arguments."""

    call_id: str
    delta: str


@dataclass(slots=True)
class ToolCallEnded(RunEvent):
    """A tool call's arguments are complete."""

    call_id: str


@dataclass(slots=True)
class ToolResult(RunEvent):
    """What a tool call returned, as the model reads it (the tool message `message_id`)."""

    message_id: str
    call_id: str
    content: str


# -- sub-agents and handoffs ------------------------------------------------------------------


@dataclass(slots=True)
class SubagentStarted(RunEvent):
    """A sub-agent's run (`subagent_run_id`) began; `parent_tool_call_id` is the tool call
    that started it, `parent_subagent_run_id` the sub-agent run that call belongs to."""

    name: str
    description: str | None = None
    parent_subagent_run_id: str | None = None
    parent_tool_call_id: str | None = None


@dataclass(slots=True)
class SubagentFinished(RunEvent):
    """A sub-agent's run ended with `result`, or, with `interrupt_ids`, is suspended until
    those interrupts are answered."""

    result: Any = None
    interrupt_ids: list[str] | None = None


@dataclass(slots=True)
class SubagentError(RunEvent):
    """A sub-agent's run failed; the parent run may go on."""

    message: str
    code: str | None = None


@dataclass(slots=True)
class Handoff(RunEvent):
    """`source` handed the conversation to `target` with the `transfer_to_...` call
    `tool_call_id`; `reason` as the model said it."""

    source: str
    target: str
    tool_call_id: str
    reason: str = ""


# -- custom events ----------------------------------------------------------------------------


@dataclass(slots=True)
class Custom(RunEvent):
    """An event of a name of its own (a router's choice, the dev UI's step details, ...)."""

    name: str
    value: Any = None


@dataclass(slots=True)
class NamedCustom(RunEvent):
    """A custom event of the library's, of one fixed `NAME`, its payload in `value`."""

    NAME: ClassVar[str] = ""
    value: Any = None

    @property
    def name(self) -> str:
        """The event's name (its class's `NAME`)."""
        return self.NAME


@dataclass(slots=True)
class ContextCompacted(NamedCustom):
    """The context policy compacted an agent's history (`value`: what it did)."""

    NAME: ClassVar[str] = "ContextCompacted"


@dataclass(slots=True)
class MemoryRecalled(NamedCustom):
    """Long-term memories were recalled into an agent's request (`value`: which)."""

    NAME: ClassVar[str] = "MemoryRecalled"


@dataclass(slots=True)
class ToolCallRetry(NamedCustom):
    """A tool call failed and is tried again (`value`: the call, the attempt, the error)."""

    NAME: ClassVar[str] = "TOOL_CALL_RETRY"


@dataclass(slots=True)
class ToolCallProgress(NamedCustom):
    """A running tool said how far it is (`value`: the call, the progress, its total, a
    message; an MCP server's `notifications/progress`)."""

    NAME: ClassVar[str] = "TOOL_CALL_PROGRESS"


@dataclass(slots=True)
class OutputInvalid(NamedCustom):
    """An answer failed the agent's typed output and is asked again or given up."""

    NAME: ClassVar[str] = "OutputInvalid"


@dataclass(slots=True)
class PredictState(NamedCustom):
    """The network's predictive state entries, announced once the run has started."""

    NAME: ClassVar[str] = "PredictState"
