"""Continuing a stopped run durably: `network.run(Resume(...), durable=True)` and
`network.run(ToolResults(...), durable=True)`.

A durable run that stops on interrupts (a confirmation) or on client tool calls ends its
workflow: the person (or the client) may answer hours later, from another process. The
continuation is a workflow of its own, under its own run id, whose inputs are what the
stopped run left (`Stopped`: its state, conversation, interrupts or pending calls, its
thread) and the answers, validated before anything is recorded. Inside it the accepted tool
calls, the router decisions, model calls and tool calls that follow are recorded steps like
a durable run's, so a continuation killed midway resumes from its last completed step and
runs no completed step twice; an accepted tool that was in flight runs again (at least once).

The inputs are stored with DBOS's serializer (pickle), like step outputs: state values,
messages and client tool results must be picklable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from network import kernel
from network.history.results import InferenceResult
from network.run.held_branches import trailing_branch_results
from network.run.inputs import Resume, ToolResults
from network.run.options import RunOptions
from network.run.result import RunResult, StopReason
from network.run.steps import StepRunner
from network.state.state import State

if TYPE_CHECKING:
    from network.run.definition import RunnableNetwork

Kind = Literal["resume", "answer_tool_calls"]
"""How a continuation continues (recorded with its workflow: the names stay as recorded)."""


@dataclass
class Stopped:
    """What a continuation needs of the run that stopped (its `RunResult`, as data)."""

    run_id: str
    input: str
    state: dict[str, Any]
    messages: list[Any]
    interrupts: list[Any] = field(default_factory=list)
    pending_tool_calls: list[Any] = field(default_factory=list)
    thread_id: str | None = None
    persisted: bool = False
    first_agent: str = ""
    trace_id: str | None = None
    span_id: str | None = None
    # The calls the run ended with that ran in parallel branches (not on a thread): a call
    # held in one is resumed inside its branch (`network.run.held_branches`).
    branch_results: list[Any] = field(default_factory=list)

    @classmethod
    def of(cls, result: Any) -> Stopped:
        results = result.state.results
        first = results[0] if len(results) else None
        # A run saved to its thread continues from the thread (reloaded, as a step): its
        # state and conversation, however long, need not be stored with the continuation.
        on_thread = result.persisted and result.thread_id is not None
        return cls(
            run_id=result.run_id,
            input=first.input if first is not None else "",
            state={} if on_thread else result.state.snapshot(),
            messages=[] if on_thread else list(result.state.messages),
            interrupts=list(result.interrupts),
            pending_tool_calls=list(result.pending_tool_calls),
            thread_id=result.thread_id,
            persisted=result.persisted,
            first_agent=first.agent if first is not None else "",
            trace_id=result.trace_id,
            span_id=result.span_id,
            branch_results=[]
            if on_thread
            else trailing_branch_results([*result.earlier_branch_results, *results]),
        )

    def result(self, network: RunnableNetwork) -> RunResult:
        """The stopped run's `RunResult` again, as much of it as continuing reads: its state
        and conversation, and its first agent call reduced to the run's input."""
        first = [InferenceResult(self.first_agent, self.input)] if self.first_agent else []
        first += getattr(self, "branch_results", [])  # (a continuation recorded before it had them)
        state = State(self.state, schema=network.schema, messages=self.messages, results=first)
        reason = StopReason.INTERRUPTED if self.interrupts else StopReason.CLIENT_TOOL
        return RunResult(
            stop_reason=reason,
            state=state,
            run_id=self.run_id,
            thread_id=self.thread_id,
            interrupts=list(self.interrupts),
            pending_tool_calls=list(self.pending_tool_calls),
            persisted=self.persisted,
            trace_id=self.trace_id,
            span_id=self.span_id,
        )


@dataclass
class Continuation:
    """A continuation's inputs: how it continues, what stopped, and the (validated) answers:
    `Answer`s for `resume`, `{tool_call_id: result text}` for `answer_tool_calls`."""

    kind: Kind
    stopped: Stopped
    answers: Any

    async def run(
        self, network: RunnableNetwork, options: RunOptions, steps: StepRunner
    ) -> RunResult:
        """Continue the stopped run (inside the continuation's workflow), its steps recorded."""
        stopped = self.stopped.result(network)
        request: Resume | ToolResults
        if self.kind == "resume":
            request = Resume(self.answers, stopped=stopped)
        else:
            request = ToolResults(self.answers, stopped=stopped)
        return await kernel.run(network, request, options, steps=steps)
