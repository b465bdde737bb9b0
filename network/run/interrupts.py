"""Human confirmation: runs that stop on a tool call, and how they continue.

A tool marked `@tool(requires_confirmation=True)` is not run when a model asks for it. The
dispatcher records an `Interrupt` instead (its tool call, arguments, the state change it
proposes and a checkpoint of the state before that proposal), shows the proposal to event
consumers as a STATE_DELTA, and the run ends with `StopReason.INTERRUPTED`: RUN_FINISHED
carries an AG-UI interrupt outcome and `RunResult.interrupts` lists what waits.

The proposal is never written to the run's state: the server's state stays at the checkpoint
until the call is accepted. Only a consumer's copy shows it (optimistically).

The next run answers every pending interrupt (`network.resume(result, [...])`, or AG-UI's
`resume` entries through the server):

- accepted: the tool runs with the stored arguments (its state writes are committed as usual,
  so the proposal becomes real), its result is reported and added to the conversation, and
  the router continues from there as after any agent call;
- rejected: the proposed keys are restored from the checkpoint (never from a client's
  optimistic copy), the run starts from that state (its first STATE_SNAPSHOT puts the client
  back in sync), and the model is told through the tool result that the person rejected the
  call. The router then continues as after any agent call; it may send the agent back, which
  may propose something else.

Here: the data (`Interrupt`, `Answer`) and the matching of answers to what waits;
`network.run.resumption` finishes the answered calls at the start of the next run, and the
facade (`Network.resume`) builds that run.

Decisions where the peers are silent: a resumed run starts a fresh list of agent calls (the
conversation and the state carry over); queued agents of the interrupted run are not resumed,
the router is asked again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from network.errors import AgentNetworkError
from network.ids import new_id

CONFIRMATION = "confirmation_required"
"""The `reason` of an interrupt raised by a `requires_confirmation` tool."""

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "true runs the tool, false rejects it"},
        "reason": {"type": "string", "description": "why, told to the model on a rejection"},
    },
    "required": ["approved"],
}
"""What an AG-UI client answers in `resume[].payload` (a bare boolean is accepted too)."""


class InterruptError(AgentNetworkError):
    """A resume that does not match the pending interrupts (missing, unknown or malformed)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """A person's decision on one interrupt (built by `Interrupt.accept()` / `.reject()`)."""

    interrupt_id: str
    approved: bool
    reason: str | None = None


def _interrupt_id() -> str:
    return new_id("int_")


# Slotted dataclasses, not pydantic models: built by the library itself (never from outside
# input), and `import network` does not pay for building models.
@dataclass(slots=True, kw_only=True)
class Interrupt:
    """A tool call that waits for a person's confirmation."""

    id: str = field(default_factory=_interrupt_id)
    reason: str = CONFIRMATION
    message: str = ""
    tool_call_id: str
    tool: str
    agent: str
    arguments: Any = None
    proposal: dict[str, Any] = field(default_factory=dict)  # state key -> proposed JSON value
    checkpoint: dict[str, Any] = field(default_factory=dict)  # the state before the proposal

    def accept(self) -> Answer:
        """Run the tool."""
        return Answer(interrupt_id=self.id, approved=True)

    def reject(self, reason: str | None = None) -> Answer:
        """Do not run the tool; `reason` is passed on to the model."""
        return Answer(interrupt_id=self.id, approved=False, reason=reason)

    def to_agui(self) -> dict[str, Any]:
        """The fields of the AG-UI `Interrupt` sent in RUN_FINISHED's outcome."""
        return {
            "id": self.id,
            "reason": self.reason,
            "message": self.message,
            "tool_call_id": self.tool_call_id,
            "response_schema": RESPONSE_SCHEMA,
            "metadata": {
                "tool": self.tool,
                "agent": self.agent,
                "arguments": self.arguments,
                "proposal": self.proposal,
            },
        }


def match_answers(
    pending: Sequence[Interrupt], answers: Answer | Iterable[Answer] | Mapping[str, bool]
) -> list[tuple[Interrupt, Answer]]:
    """Pair every pending interrupt with its answer, or `InterruptError` saying what is off."""
    if isinstance(answers, Answer):
        answers = [answers]
    elif isinstance(answers, Mapping):
        answers = [Answer(interrupt_id=key, approved=bool(ok)) for key, ok in answers.items()]
    by_id: dict[str, Answer] = {}
    for answer in answers:
        if not isinstance(answer, Answer):
            raise InterruptError(
                f"expected an Answer (interrupt.accept() / .reject()), got {answer!r}"
            )
        by_id[answer.interrupt_id] = answer
    known = {interrupt.id for interrupt in pending}
    unknown = sorted(set(by_id) - known)
    if unknown:
        raise InterruptError(
            f"no pending interrupt has id {', '.join(unknown)} "
            f"(pending: {', '.join(sorted(known)) or 'none'})"
        )
    missing = [interrupt.id for interrupt in pending if interrupt.id not in by_id]
    if missing:
        raise InterruptError(
            f"{len(missing)} pending interrupt(s) not answered: {', '.join(missing)}; "
            "answer each with accept or reject"
        )
    return [(interrupt, by_id[interrupt.id]) for interrupt in pending]


def restore_rejected(data: dict[str, Any], answered: Sequence[tuple[Interrupt, Answer]]) -> None:
    """Put back, in `data`, the checkpointed value of every key a rejected call proposed."""
    for interrupt, answer in answered:
        if answer.approved:
            continue
        for key in interrupt.proposal:
            if key in interrupt.checkpoint:
                data[key] = interrupt.checkpoint[key]
            else:
                data.pop(key, None)


def pending_answers(interrupted: Any, answers: Any) -> list[tuple[Interrupt, Answer]]:
    """The answered interrupts of a `RunResult` that stopped on them (`InterruptError` else)."""
    pending = list(interrupted.interrupts)
    if not pending:
        raise InterruptError(f"run {interrupted.run_id!r} did not stop on an interrupt")
    return match_answers(pending, answers)
