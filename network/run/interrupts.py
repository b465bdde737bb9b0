"""Human confirmation: runs that stop on a tool call, and how they continue.

A tool marked `@tool(requires_confirmation=True)` is not run when a model asks for it. The
dispatcher records an `Interrupt` instead (its tool call, arguments, the state change it
proposes and a checkpoint of the state before that proposal), shows the proposal to event
consumers as a STATE_DELTA, and the run ends with `StopReason.INTERRUPTED`: RUN_FINISHED
carries an AG-UI interrupt outcome and `RunResult.interrupts` lists what waits.

The proposal is never written to the run's state: the server's state stays at the checkpoint
until the call is accepted. Only a consumer's copy shows it (optimistically).

The next run answers every pending interrupt (`network.run(result.resume([...]))`, or AG-UI's
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

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from network.errors import AgentNetworkError, ConfigurationError
from network.ids import new_id
from network.state.values import json_part

CONFIRMATION = "confirmation_required"
"""The `reason` of an interrupt raised by a `requires_confirmation` tool."""

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "true runs the tool, false rejects it"},
        "reason": {"type": "string", "description": "why, told to the model on a rejection"},
        "editedArgs": {
            "type": "object",
            "description": "with approved: run the call with these arguments instead",
        },
    },
    "required": ["approved"],
}
"""What an AG-UI client answers in `resume[].payload` (a bare boolean is accepted too)."""


class InterruptError(AgentNetworkError):
    """A resume that does not match the pending interrupts (missing, unknown or malformed)."""


class AlreadyAnsweredError(InterruptError):
    """The interrupts (or client tool calls) were answered already: nothing ran this time.

    Each pending call is answered exactly once; the store decides which answer was first
    (over HTTP: 409). `ids` names the calls that were answered before.
    """

    def __init__(
        self, message: str, *, ids: Sequence[str] = (), answered_by: str | None = None
    ) -> None:
        super().__init__(message)
        self.ids = tuple(ids)
        self.answered_by = answered_by  # the run whose answer came first, when known


class _NotResponded:
    def __repr__(self) -> str:
        return "NOT_RESPONDED"


NOT_RESPONDED: Any = _NotResponded()
"""`Answer.response` of an answer that is not a free-form response."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """A person's decision on one interrupt (built by `Interrupt.accept()`, `.reject()`,
    `.respond()`).

    `arguments`: the edited arguments an accepted call runs with (None: the model's own).
    `response`: a free-form answer given to the model as the call's result instead of
    running the tool (`NOT_RESPONDED` when the answer is not one).
    """

    interrupt_id: str
    approved: bool
    reason: str | None = None
    arguments: dict[str, Any] | None = None
    response: Any = NOT_RESPONDED

    def __post_init__(self) -> None:
        # Answers are built from a client's JSON too (a protocol of your own, a queue's
        # message), and `approved` was read by its truth: "no", "false" or 1 ran the tool.
        # Each field is checked as it is made, so a bad one is refused before anything runs.
        if type(self.interrupt_id) is not str:
            raise InterruptError(
                f"Answer: interrupt_id must be a string, got {_shown(self.interrupt_id)}"
            )
        call = f"interrupt {self.interrupt_id!r}"
        if type(self.approved) is not bool:
            raise InterruptError(
                f"{call}: approved must be True or False, got {_shown(self.approved)}"
            )
        if self.reason is not None and not isinstance(self.reason, str):
            raise InterruptError(f"{call}: reason must be a string, got {_shown(self.reason)}")
        if self.arguments is not None and not isinstance(self.arguments, dict):
            raise InterruptError(
                f"{call}: arguments (the edited call's) must be a dict, got "
                f"{type(self.arguments).__name__}"
            )
        if self.arguments is not None and not self.approved:
            raise InterruptError(f"{call}: edited arguments go with approved=True only")
        if self.responded:
            if self.approved:
                raise InterruptError(f"{call}: a response is given instead of running the call")
            object.__setattr__(self, "response", json_response(call, self.response))

    @property
    def responded(self) -> bool:
        """True when the answer is a free-form response (`Interrupt.respond`)."""
        return self.response is not NOT_RESPONDED

    def to_json(self) -> dict[str, Any]:
        """The answer as JSON data (what a thread store keeps with the answered call)."""
        data: dict[str, Any] = {"approved": self.approved}
        if self.reason is not None:
            data["reason"] = self.reason
        if self.arguments is not None:
            data["arguments"] = self.arguments
        if self.responded:
            data["response"] = self.response
        return data


def json_response(call: str, value: Any) -> Any:
    """`value` as a responded call's result: a string as it is, anything else as the JSON
    data it makes, or `InterruptError` naming `call` when it makes none."""
    if isinstance(value, str):
        return value
    try:
        return json.loads(json.dumps(value, allow_nan=False, default=json_part))
    except (TypeError, ValueError, RecursionError) as exc:
        raise InterruptError(
            f"{call}: a response is a string or JSON data (the result the model reads), "
            f"got {type(value).__name__}: {exc}"
        ) from None


def _shown(value: Any) -> str:
    """A client's value as an error shows it: its start only (it may be ~1 MiB)."""
    text = repr(value)
    return text if len(text) <= 100 else f"{text[:100]}... ({len(text)} characters)"


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
    # An interrupt raised inside a sub-run (an agent or a network used as a tool): the id of
    # that sub-agent run, and what continuing it needs (`agents.tools._subrun`): the tool call
    # that started it and the stopped sub-run, as JSON data. None for the run's own calls.
    subagent_run_id: str | None = None
    nested: dict[str, Any] | None = None

    def accept(self, *, arguments: Mapping[str, Any] | None = None) -> Answer:
        """Run the tool; with `arguments`, run it with these instead of the model's.

        Edited arguments are validated against the tool's schema when the answer is given to
        a run (a bad edit is an `InterruptError` naming the field, and the interrupt stays
        pending); the edited call is what runs and what the history records.
        """
        if arguments is not None and not isinstance(arguments, Mapping):
            raise InterruptError(
                f"interrupt {self.id!r}: edited arguments must be an object, "
                f"got {type(arguments).__name__}"
            )
        edited = None if arguments is None else dict(arguments)
        return Answer(interrupt_id=self.id, approved=True, arguments=edited)

    def reject(self, reason: str | None = None) -> Answer:
        """Do not run the tool; `reason` is passed on to the model."""
        return Answer(interrupt_id=self.id, approved=False, reason=reason)

    def respond(self, value: Any) -> Answer:
        """Do not run the tool: `value` is the call's result the model reads (a string as it
        is, anything else as JSON); a proposed state change is undone as for a rejection.

        A value JSON has no form for (NaN or infinity, an arbitrary object, a set) is an
        `InterruptError` naming the interrupt and its tool: the model read "NaN" or the
        object's repr. Parts JSON has no form for are read as in a tool's result (`json_part`:
        bytes as their UTF-8 text, else `{"base64": ...}`; a pydantic model or a dataclass as
        its JSON data); the response kept is what JSON makes of the value (a tuple reads back
        as a list)."""
        value = json_response(f"interrupt {self.id!r} (tool {self.tool!r})", value)
        return Answer(interrupt_id=self.id, approved=False, response=value)

    def to_json(self) -> dict[str, Any]:
        """The interrupt as JSON data (what a thread store keeps while it is pending)."""
        return {
            "id": self.id,
            "reason": self.reason,
            "message": self.message,
            "tool_call_id": self.tool_call_id,
            "tool": self.tool,
            "agent": self.agent,
            "arguments": self.arguments,
            "proposal": self.proposal,
            "checkpoint": self.checkpoint,
            **({} if self.nested is None else {"nested": self.nested}),
            **({} if self.subagent_run_id is None else {"subagent_run_id": self.subagent_run_id}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Interrupt:
        """An interrupt back from `to_json`."""
        return cls(**{name: data[name] for name in _INTERRUPT_FIELDS if name in data})

    def to_agui(self) -> dict[str, Any]:
        """The fields of the AG-UI `Interrupt` sent in RUN_FINISHED's outcome.

        One raised inside a sub-run names the sub-agent run (`subagent_run_id`) and the call
        that waits there (its tool call id, tool, agent and arguments, as the client saw them
        streamed with that `subagentRunId`)."""
        waiting = (self.nested or {}).get("waiting") or {}
        data = {
            "id": self.id,
            "reason": self.reason,
            "message": self.message,
            "tool_call_id": waiting.get("tool_call_id", self.tool_call_id),
            "response_schema": RESPONSE_SCHEMA,
            "metadata": {
                "tool": waiting.get("tool", self.tool),
                "agent": waiting.get("agent", self.agent),
                "arguments": waiting.get("arguments", self.arguments),
                "proposal": self.proposal,
            },
        }
        if self.subagent_run_id is not None:
            data["subagent_run_id"] = self.subagent_run_id
        return data


_INTERRUPT_FIELDS = (
    "id",
    "reason",
    "message",
    "tool_call_id",
    "tool",
    "agent",
    "arguments",
    "proposal",
    "checkpoint",
    "subagent_run_id",
    "nested",
)


def match_answers(
    pending: Sequence[Interrupt], answers: Answer | Iterable[Answer] | Mapping[str, bool]
) -> list[tuple[Interrupt, Answer]]:
    """Pair every pending interrupt with its answer, or `InterruptError` saying what is off:
    answers that are no list of `Answer`s (text was read letter by letter, None failed with a
    TypeError), an interrupt answered twice (accept and reject of one call: the last won,
    silently), a `{id: value}` whose value is not True or False (`"no"` approved the call)."""
    if isinstance(answers, Answer):
        answers = [answers]
    elif isinstance(answers, Mapping):
        for key, ok in answers.items():
            if type(ok) is not bool:
                raise InterruptError(
                    f"answers {{interrupt_id: approved}}: the answer to {key!r} must be True or "
                    f"False, got {ok!r}"
                )
        answers = [Answer(interrupt_id=key, approved=ok) for key, ok in answers.items()]
    elif isinstance(answers, str | bytes) or not isinstance(answers, Iterable):
        raise InterruptError(
            "answers must be a list with an Answer per pending interrupt (interrupt.accept(), "
            f".reject(), .respond(value)), or {{interrupt_id: True/False}}; got "
            f"{type(answers).__name__}"
        )
    by_id: dict[str, Answer] = {}
    for answer in answers:
        if not isinstance(answer, Answer):
            raise InterruptError(
                f"expected an Answer (interrupt.accept() / .reject()), got {answer!r}"
            )
        earlier = by_id.get(answer.interrupt_id)
        if earlier is not None and earlier != answer:  # which one the person meant is unknown
            raise InterruptError(
                f"interrupt {answer.interrupt_id!r} is answered twice, differently "
                f"({_decision(earlier)}, then {_decision(answer)}): answer each once"
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


def _decision(answer: Answer) -> str:
    """An answer as an error names it: what it decided, not its values."""
    if answer.responded:
        return "a response"
    if not answer.approved:
        return "reject"
    return "accept with edited arguments" if answer.arguments is not None else "accept"


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


class WithAgents(Protocol):
    """What `check_edits` reads of a network: its agents by name (a `NetworkLike` is one; the
    run context, which defines it, imports this module, so it is named by its shape here)."""

    @property
    def agents(self) -> Mapping[str, object]: ...


def _held_inside(
    agents: Mapping[str, object], interrupt: Interrupt
) -> tuple[Mapping[str, object] | None, Interrupt]:
    """The delegate's agents and its own interrupt that a sub-run tool's `interrupt` stands
    for (read by duck typing: the tool's `subagent.agents`), or None when either is unknown."""
    agent = agents.get(interrupt.agent)
    tool = (getattr(agent, "tools", None) or {}).get(interrupt.tool)
    inner_agents = getattr(getattr(tool, "subagent", None), "agents", None)
    if not isinstance(inner_agents, Mapping) or not inner_agents:
        return None, interrupt
    stopped = (interrupt.nested or {}).get("stopped") or {}
    for data in stopped.get("interrupts") or ():
        if isinstance(data, Mapping) and data.get("id") == interrupt.id:
            return inner_agents, Interrupt.from_json(data)
    return None, interrupt


def check_resumable(network: WithAgents, answered: Sequence[tuple[Interrupt, Answer]]) -> None:
    """Refuse answers whose calls this network cannot finish, before anything is claimed.

    A held call is finished by the network's agent of its name (`agent.resume`, by duck
    typing), a call held in a network branch too (that branch's inner agent). Found missing
    only once the run started, the refusal came after the answers were claimed: the
    interrupt was spent and could never be answered again. A `ConfigurationError` naming the
    agent and the network; nothing is answered (the interrupt stays pending).
    """
    for interrupt, _answer in answered:
        agent = network.agents.get(interrupt.agent)
        if agent is None or not callable(getattr(agent, "resume", None)):
            raise ConfigurationError(
                f"cannot resume tool calls of agent {interrupt.agent!r}: network "
                f"{getattr(network, 'name', '?')!r} has no such agent that can resume "
                f"(interrupt {interrupt.id!r} stays pending; a call held in a network branch "
                "is finished by the run's own agent of that name)"
            )


def check_edits(network: WithAgents, answered: Sequence[tuple[Interrupt, Answer]]) -> None:
    """Validate every edited call against its tool's schema, before anything runs.

    A bad edit is an `InterruptError` naming the interrupt, the tool and the field; nothing
    is answered (the interrupt stays pending). The agent's tools are read by duck typing
    (`agent.tools[name].validate(arguments)`): this layer does not know `agents`. A call
    held inside a sub-run is checked against the delegate's tool, level by level.
    """
    for interrupt, answer in answered:
        if answer.arguments is None:
            continue
        agents: Mapping[str, object] | None = network.agents
        while interrupt.nested is not None and agents is not None:
            # a call held inside a sub-run: the delegate's own held call (same id), checked
            # against the delegate's tools now, not once the answer is spent
            agents, interrupt = _held_inside(agents, interrupt)
        if agents is None:
            continue  # a delegate that does not say its agents: it checks when it continues
        agent = agents.get(interrupt.agent)
        tool = (getattr(agent, "tools", None) or {}).get(interrupt.tool)
        validate = getattr(tool, "validate", None)
        if not callable(validate):
            raise InterruptError(
                f"interrupt {interrupt.id!r}: cannot check the edited arguments of tool "
                f"{interrupt.tool!r} (agent {interrupt.agent!r} has no such tool)"
            )
        try:
            validate(answer.arguments)
        except Exception as exc:  # the tool's ToolError names the field
            raise InterruptError(
                f"interrupt {interrupt.id!r}: the edited arguments of {interrupt.tool!r} are "
                f"refused: {exc}"
            ) from exc
