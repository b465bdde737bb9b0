"""`AgentCall`: one agent call in progress, as its stages and capabilities see it; `ToolUse`:
one tool call about to run.

The agent step fills an `AgentCall` as it goes (see `network.run.capability` for the stages):
the instructions' `text` and `prompt`, the `history`, the tools offered, the `response`, the
tool call `records`, the `output`, the `result`. A capability reads and changes what its
stage is about; what it keeps for a later stage of the same call goes in `note(...)`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from time import perf_counter, time
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from network.history.results import InferenceResult, ModelCall, ToolCallRecord

if TYPE_CHECKING:
    from network.history.messages import ToolCall
    from network.history.model_io import ChunkHandler, ModelResponse
    from network.run.context import AgentLike, RunContext
    from network.state.state import State

__all__ = ["NO_OUTPUT", "AgentCall", "ToolLike", "ToolUse"]

T = TypeVar("T")


class _NoOutput:
    """The `output` of a call whose answer is not final (it called tools, or was skipped)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_OUTPUT"


NO_OUTPUT: Any = _NoOutput()


class AgentCall:
    """One agent call in progress.

    Attributes:
        agent: the agent being called.
        run: the `RunContext` of the run.
        prompt: the system messages recorded (and sent, unless `sent_prompt` is set); shared
            between calls with the same instructions and read-only until replaced: assign a
            new list to change it.
        history: the conversation recorded (and sent, unless `sent_history` is set).
        skip: set to True before the model request to skip the call (it is recorded, skipped).
        response: the `ModelResponse`, from the answer on.
        result: the `InferenceResult`, at the record stage.
        text: the instructions' text (None when the agent has none).
        tools: the tools offered on this call, by name.
        schemas: their schemas, as sent to the model.
        sent_prompt / sent_history: what the request sends instead of `prompt` / `history`
            (a context policy's cut), or None.
        model: the model asked.
        started_at / started: `time.time()` / `time.perf_counter()` when the call began (when
            the `AgentCall` was made).
        records: the tool calls' records, from the tool results on.
        output: the final answer (its text, or a typed value), or `NO_OUTPUT`.
        output_json: `fn(value) -> JSON data`: how `output_key` stores a typed output when
            the key has no type of its own (None: stored as it is).
        requests: the records of the model requests this call made (a tuple, which the
            call's record keeps as it is), when the run records them
            (`RunContext.engine.record_model_calls`).
        answers: the model's answers as it gave them, when `InferenceResult.answers` keeps
            them (more than one request, or an answer a capability changed); () otherwise.
        events: the call's events (text and tool calls streamed to the run's sinks), when the
            run has sinks.
        follow_chunks: `fn(handler) -> handler`: a capability following the answer as it
            streams (typed output's predictive state).
    """

    # Written out, not a dataclass: one is made on every agent call, and a generated
    # `__init__` with defaults costs twice these plain stores (benchmarks/step_budget.py).
    __slots__ = (
        "_aside",
        "_notes",
        "agent",
        "answers",
        "asked_at",
        "events",
        "follow_chunks",
        "history",
        "model",
        "output",
        "output_json",
        "prompt",
        "records",
        "requests",
        "response",
        "result",
        "run",
        "schemas",
        "sent_history",
        "sent_prompt",
        "skip",
        "started",
        "started_at",
        "text",
        "tools",
    )

    agent: AgentLike
    run: RunContext
    prompt: Sequence[Any]
    history: Sequence[Any]
    text: str | None
    skip: bool
    response: ModelResponse | None
    result: InferenceResult | None
    tools: Mapping[str, Any] | None
    schemas: list[Any] | None
    sent_prompt: Sequence[Any] | None
    sent_history: Sequence[Any] | None
    model: Any
    records: list[ToolCallRecord] | None
    output: Any
    requests: tuple[ModelCall, ...]
    answers: tuple[Any, ...]
    # The JSON form of a typed output, for an `output_key` with no type of its own (so an
    # untyped store keeps holding JSON data); None: the output is stored as it is.
    output_json: Callable[[Any], Any] | None
    events: Any  # the call's stream of events (the agent step's), when it has sinks
    # A capability following the model's stream: given the step's chunk handler (None when
    # the request does not stream), it returns the one the request gets.
    follow_chunks: Callable[[ChunkHandler | None], ChunkHandler | None] | None
    started_at: float  # time.time() when the call began
    started: float  # time.perf_counter() when the call began
    asked_at: float  # perf_counter() when its model request went out, if recorded
    _aside: dict[str, ToolCallRecord] | None
    _notes: dict[Any, Any] | None

    def __init__(
        self,
        agent: AgentLike,
        run: RunContext,
        prompt: Sequence[Any] = (),
        history: Sequence[Any] = (),
        text: str | None = None,
        tools: Mapping[str, Any] | None = None,
        schemas: list[Any] | None = None,
        model: Any = None,
    ) -> None:
        self.agent = agent
        self.run = run
        self.prompt = prompt
        self.history = history
        self.started_at = time()  # the call begins now
        self.started = perf_counter()
        self.text = text
        self.skip = False
        self.response = None
        self.result = None
        self.tools = tools
        self.schemas = schemas
        self.sent_prompt = None
        self.sent_history = None
        self.model = model
        self.records = None
        self.output = NO_OUTPUT
        self.requests = ()
        self.answers = ()
        self.output_json = None
        self.events = None
        self.follow_chunks = None
        self.asked_at = 0.0
        self._aside = None
        self._notes = None

    @property
    def state(self) -> State:
        """The run's state."""
        return self.run.state

    @property
    def deps(self) -> Any:
        """The run's `deps=` object, as given."""
        return self.run.deps

    async def resource(self, name: str) -> Any:
        """The run's resource `name`, opened on first use and closed when the run ends."""
        return await self.run.resource(name)

    def note(self, key: Any, factory: Callable[[], T]) -> T:
        """What a capability keeps for this call under `key` (made by `factory()` at first)."""
        notes = self._notes
        if notes is None:
            notes = self._notes = {}
        found = notes.get(key)
        if found is None:
            found = notes[key] = factory()
        return found

    def set_aside(self, record: ToolCallRecord) -> None:
        """The result of a tool call the `tool_calls` stage kept from running (a refusal):
        it takes that call's place, in the model's order, among the answer's records."""
        if self._aside is None:
            self._aside = {}
        self._aside[record.id] = record

    def in_model_order(
        self, asked: Sequence[ToolCall], ran: list[ToolCallRecord]
    ) -> list[ToolCallRecord]:
        """The records of the calls that ran and of those set aside, in the model's order
        (a call held or sent to a client has none yet)."""
        aside = self._aside
        if not aside:
            return ran
        by_id = {record.id: record for record in ran}
        by_id.update(aside)
        return [by_id[call.id] for call in asked if call.id in by_id]


class ToolLike(Protocol):
    """What a capability reads of a tool (`agents.Tool` is one)."""

    name: str

    def validate(self, arguments: Any) -> Any:
        """The arguments validated by the tool's schema (`ToolError` when they are not)."""
        ...


@dataclass(slots=True, eq=False)
class ToolUse:
    """One tool call about to run, as `wrap_tool` sees it.

    Attributes:
        call: the model's `ToolCall`.
        tool: the tool it names (None: no such tool was offered).
        state: the state its writes go to (the run's, or a staged view of it when several
            calls run at once).
        agent_call: the agent call that asked for it, when the agent step ran it (None for a
            call resumed after a person's answer).
        run: the run.
        agent: the agent whose tool it is.
    """

    call: ToolCall
    tool: ToolLike
    state: State
    run: RunContext
    agent: AgentLike
    agent_call: AgentCall | None = None
