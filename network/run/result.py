"""`RunResult`: what a run returns, and why it stopped."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableSequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from network.errors import GuardrailTripped, RoutingError, RunStopped
from network.history.log import RecordLog
from network.history.results import InferenceResult, Usage
from network.run.inputs import Resume, ToolResults
from network.run.limits import LimitExceeded, UsageFigures
from network.run.result_view import html_table, plain, rich_table
from network.state.state import State


class StopReason(StrEnum):
    """Why a run ended."""

    ROUTER_FINISHED = "router_finished"  # the router returned None with nothing queued
    MAX_ITER = "max_iter"  # the network's cap on agent calls was reached
    ROUTER_DONE = "router_done"  # an LLM router called its `done` tool
    ROUTER_TEXT = "router_text"  # an LLM router answered in text instead of choosing
    INTERRUPTED = "interrupted"  # a tool waits for a person's confirmation
    AGENT_ANSWERED = "agent_answered"  # `agent.run`: the agent answered without tool calls
    AGENT_SKIPPED = "agent_skipped"  # `agent.run`: its on_start hook skipped the call
    CLIENT_TOOL = "client_tool"  # the model called a tool that runs in the client
    ERROR = "error"  # an exception ended the run (only seen on `partial_result`)
    USAGE_LIMIT = "usage_limit"  # a `UsageLimits` cap was reached (see `limit_exceeded`)
    GUARDRAIL = "guardrail"  # a guardrail's tripwire fired (see `RunResult.guardrail`)


@dataclass(slots=True, frozen=True)
class Stop:
    """A router's explicit "end the run here", with a reason and an optional summary.

    `reason` is a non-empty string (a `StopReason` or the router's own word) and `summary` a
    string or None; anything else is a `RoutingError` naming the field when the `Stop` is
    made, since the reason becomes the result's `stop_reason`, which callers compare with
    strings, and both are stored with a thread and sent to clients.

    `cause` is the `RunStopped` a capability raised to end the run (the run loop makes the
    `Stop` of it; a router leaves it None): how a stop's own detail reaches the `RunResult`
    without the run knowing the feature that raised it (a guardrail's trip becomes
    `RunResult.guardrail`).
    """

    reason: StopReason | str = StopReason.ROUTER_FINISHED
    summary: str | None = None
    cause: RunStopped | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason:
            raise RoutingError(f"Stop.reason must be a non-empty string, got {self.reason!r}")
        if self.summary is not None and not isinstance(self.summary, str):
            raise RoutingError(f"Stop.summary must be a string or None, got {self.summary!r}")
        if self.cause is not None and not isinstance(self.cause, RunStopped):
            raise RoutingError(f"Stop.cause must be a RunStopped or None, got {self.cause!r}")


@dataclass(slots=True, eq=False)
class RunResult:
    """The outcome of `network.run`.

    Index it like Haystack's result dict: `result["files"]` reads a state key (a copy),
    `result["messages"]` the conversation and `result["last_message"]` its last message.

    Attributes:
        stop_reason: why the run ended: a `StopReason`, or a router's own `Stop` reason.
        state: the run's final `State` (kv and history).
        run_id: the run's id.
        output: the final output text: the last agent text of the run (a typed agent's
            JSON; `output_value` is the typed object).
        usage: token totals over every agent call (its sub-runs' and its routing agent's
            requests included).
        spent: what the run spent as `UsageFigures`: model requests (`model_calls`, its
            sub-runs', routing agent's and guardrails' included), tool calls, tokens and
            cost. A run that records no requests (no limits, not traced) counts one request
            per agent call that answered, at an unknown cost (`unpriced`).
        thread_id: the thread the run belongs to, if any.
        summary: what a router's `Stop` (or an LLM router's `done`) said, if anything.
        duration_ms: how long the run took.
        interrupts: tool calls waiting for a person's confirmation (stop reason
            "interrupted"); answer them with `network.run(result.resume(answers))`.
        pending_tool_calls: client tool calls to answer (stop reason "client_tool"), with
            `network.run(result.tool_results({call_id: result}))`.
        persisted: True when the run was saved to its thread.
        error: the exception that ended the run (only on `partial_result`).
        guardrail: the `GuardrailTripped` that stopped the run (stop reason "guardrail"):
            which guardrail, of which agent or tool, and what it said (`info`).
    """

    stop_reason: StopReason | str
    state: State
    run_id: str
    output: str | None = None  # the final output text: the last agent text of the run
    usage: Usage = field(default_factory=Usage)
    thread_id: str | None = None
    summary: str | None = None  # what a router's Stop said, if anything
    duration_ms: float = 0.0
    interrupts: list[Any] = field(default_factory=list)
    pending_tool_calls: list[Any] = field(default_factory=list)  # client tool calls to answer
    persisted: bool = False  # the run was saved to its thread (resume reopens the thread)
    error: BaseException | None = None
    limit_exceeded: LimitExceeded | None = None  # the usage limit that stopped the run
    # What `spent` counts when first read (`network.run.subrun.SpentLater`), then the figures
    spent_later: Any = None
    trace_id: str | None = None  # the run's OpenTelemetry trace (hex), when it was traced
    span_id: str | None = None  # its root span (hex): what a resumed run links to
    # Parallel branches that failed under `on_error="continue"` (`BranchFailure`s)
    failed_branches: list[Any] = field(default_factory=list)
    # The id of the run that continued this one (answered its interrupts or client tool
    # calls): a result kept in memory is continued once (on a thread, the store decides)
    continued_by: str | None = None
    guardrail: GuardrailTripped | None = None  # the trip that stopped the run
    # A continuation kept in memory: the calls of the fan-out it resumed branches of, made by
    # the runs before it (its state has only its own calls), for the next resume's join
    # (`network.run.held_branches`)
    earlier_branch_results: list[Any] = field(default_factory=list, repr=False)

    @property
    def spent(self) -> UsageFigures:
        """What the run spent (see the class docstring), counted on first read."""
        later = self.spent_later
        if isinstance(later, UsageFigures):
            return later
        figures: UsageFigures = later.figures() if later is not None else UsageFigures()
        self.spent_later = figures
        return figures

    def resume(self, answers: Any) -> Resume:
        """The input of the run that answers this run's interrupts:
        `network.run(result.resume([interrupt.accept(), ...]))`."""
        return Resume(answers, stopped=self)

    def tool_results(self, results: Mapping[str, Any]) -> ToolResults:
        """The input of the run that answers this run's client tool calls:
        `network.run(result.tool_results({call_id: result}))`."""
        return ToolResults(results, stopped=self)

    @property
    def results(self) -> MutableSequence[InferenceResult]:
        """Every agent call in the run's state, in order: on a thread, the earlier runs'
        calls come first (`this_run` has only this run's)."""
        return self.state.results

    @property
    def this_run(self) -> list[InferenceResult]:
        """The agent calls this run made, in order (`results` without a thread's earlier
        runs; a parallel fan-out's branch calls included)."""
        results = self.state.results
        return results.own() if isinstance(results, RecordLog) else list(results)

    @property
    def output_value(self) -> Any:
        """The run's final answer as a value: a typed agent's validated object
        (`Agent(output_type=T)`, `InferenceResult.output_value`), not its JSON text; an
        answer in text is that text (`output`). None when no call of this run answered."""
        for result in reversed(self.this_run):
            if result.output_value is not None:
                return result.output_value
            if result.text is not None:
                return result.text
        return None

    @property
    def tool_errors(self) -> list[Any]:
        """Every tool call in `results` that failed (a `ToolCallRecord` each, oldest first).

        The model saw each one as an error result and the run went on; this is where the
        developer sees them without reading the whole history.
        """
        return [call for result in self.results for call in result.tool_calls if call.is_error]

    @property
    def messages(self) -> list[Any]:
        """The conversation as one message list."""
        return list(self.state.messages)

    @property
    def last_message(self) -> Any:
        """The conversation's last message, or None."""
        messages = self.state.messages
        return messages[-1] if len(messages) else None

    def __getitem__(self, key: str) -> Any:
        if key == "messages":
            return self.messages
        if key == "last_message":
            return self.last_message
        kv = self.state.kv
        if not kv.has(key):
            raise KeyError(key)
        return kv.get(key)

    def __contains__(self, key: object) -> bool:
        return key in ("messages", "last_message") or self.state.kv.has(key)  # type: ignore[arg-type]

    def get(self, key: str, default: Any = None) -> Any:
        """A state key's value, `messages`, `last_message`, or `default`."""
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> list[str]:
        """The state keys plus `messages` and `last_message`."""
        return [*self.state.kv.keys(), "messages", "last_message"]

    def __iter__(self) -> Iterator[str]:
        # as a dict iterates: its keys (without it, `list(result)` fell back to indexing
        # from 0 and raised KeyError: 0)
        return iter(self.keys())

    def __repr__(self) -> str:
        return plain(self)

    def __rich__(self) -> Any:
        """A table for rich (`rich.print(result)`): stop reason, calls, output, usage, state."""
        return rich_table(self)

    def _repr_html_(self) -> str:
        """The same table for Jupyter."""
        return html_table(self)
