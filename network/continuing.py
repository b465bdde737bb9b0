"""Continuing a stopped run: `network.run(Resume(...))` and `network.run(ToolResults(...))`.

A continuation is a run like any other, built from what the stopped run left
(`continuation` prepares its context and, on a thread, its session; the run kernel,
`network.kernel`, runs it):

- on a thread, it continues that thread, reopened from its store (it must exist). The
  answers are matched against the calls the stored thread waits on (`Thread.pending`), so a
  process holding only the thread id can answer (`Resume(answers)` with `thread=`), and the
  store claims them atomically before anything runs: a second answer, from this process or
  another, is `AlreadyAnsweredError` and runs nothing (`network.threads.pending`). The held
  calls never ran and proposals were never applied there, so the stored state is the
  checkpoint;
- in memory, it continues from a copy of the stopped `RunResult`'s state and conversation
  (the keys a rejected call proposed restored from its checkpoint); the result remembers that
  it was continued (`continued_by`), so one result is continued once.

Every answer is checked before anything changes: unknown, missing or malformed answers, and
edited arguments the tool's schema refuses (`InterruptError`, `ClientToolError`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from network.errors import ConfigurationError
from network.history.handoffs import active_agent
from network.history.messages import ToolMessage, UserMessage
from network.ids import new_id
from network.run.client_results import result_messages
from network.run.context import NetworkLike, RunBookkeeping, RunContext
from network.run.definition import RunnableNetwork
from network.run.held_branches import trailing_branch_results
from network.run.inputs import Resume, ToolResults
from network.run.interrupts import (
    AlreadyAnsweredError,
    Answer,
    Interrupt,
    InterruptError,
    check_edits,
    check_resumable,
    match_answers,
    restore_rejected,
)
from network.run.options import RunOptions
from network.run.resources import run_resources
from network.run.result import RunResult, StopReason
from network.run.steps import StepRunner
from network.run.thread_ref import ThreadRef
from network.sessions import open_session
from network.state.state import State
from network.telemetry.run_trace import link_to

if TYPE_CHECKING:
    from network.threads.session import ThreadSession


async def continuation(
    network: RunnableNetwork,
    request: Resume | ToolResults,
    options: RunOptions,
    steps: StepRunner | None,
) -> tuple[RunContext, ThreadSession | None]:
    """The context of the continuation `request` asks for, with `options`, and its thread's
    session when it has one (see the module docstring): the answers are checked, and on a
    thread claimed, before it is returned."""
    if options.state is not None:
        raise ConfigurationError(
            "state= does not apply to a continuation: it continues the stopped run's state"
        )
    stopped: RunResult | None = request.stopped
    thread = _thread_of(request, stopped, options.thread)
    run_id = options.run_id or new_id("run_")
    session = None
    waiting: list[Any] = []  # what the thread waited on (a thread's continuation)
    if thread is None:
        assert stopped is not None  # `_thread_of` refuses a request with neither
        answered = _answers(network, request, stopped.interrupts, stopped.pending_tool_calls)
        claim_in_memory(stopped, run_id)
        state = _copy_of(network, stopped, answered if isinstance(request, Resume) else ())
        input = stopped.state.results[0].input if len(stopped.state.results) else ""
        # the copy carries the conversation, not the agent calls: who had it when the run
        # stopped (a handoff made beside the calls it waits on) is said here instead
        active = active_agent(stopped.state.results)
    else:
        session = await open_session(network, thread, steps=steps, create=False)
        waiting = list(session.pending)  # before the claim takes the answered ones out
        answered = await _claimed_on_thread(network, request, stopped, session, run_id)
        state = session.state
        input = _last_input(state)
        active = None  # read from the thread's agent calls
    ctx = RunContext(
        network=network,
        state=state,
        input=input,
        run_id=run_id,
        thread_id=None if thread is None else thread.id,
        deps=options.deps,
        engine=RunBookkeeping(
            resources=run_resources(
                "resume" if isinstance(request, Resume) else "tool_results",
                options.resources,
                network.resources,
            ),
            steps=steps,
            continues=True,
            known_active_agent=active,
        ),
    )
    if isinstance(request, Resume):
        ctx.engine.resume = answered
        # where the answered calls were made (a parallel branch's is resumed inside it)
        if thread is None and stopped is not None:  # the copy has no calls: the result's
            history = [*stopped.earlier_branch_results, *stopped.state.results]
            ctx.engine.resumed_history = history
            ctx.engine.earlier_branch_results = trailing_branch_results(history)
        else:
            ctx.engine.resumed_history = state.results
        if stopped is not None and stopped.trace_id is not None and stopped.span_id is not None:
            link_to(ctx, ((stopped.trace_id, stopped.span_id),))  # its trace
        elif thread is not None:  # answered by thread id (any process): the stored entries'
            from network.threads.pending import trace_links  # noqa: PLC0415 (thread stores load on use)

            link_to(ctx, trace_links(waiting, answered))
    else:
        state.append_messages(answered)
    return ctx, session


async def _claimed_on_thread(
    network: NetworkLike,
    request: Resume | ToolResults,
    stopped: RunResult | None,
    session: ThreadSession,
    run_id: str,
) -> Any:
    """The request's answers matched to what the thread waits on, claimed by the store for
    `run_id` (a call answered already, or never pending, is refused by the store: it says
    why); the session is closed when they are refused."""
    try:
        waiting = session.pending
        interrupts = [entry.interrupt() for entry in waiting if entry.kind == "interrupt"]
        calls = [entry.tool_call() for entry in waiting if entry.kind == "client_tool"]
        if stopped is not None:
            _still_waiting(session.thread_id, stopped, interrupts, calls)
        gone = _not_waiting(request, waiting)
        if gone:  # the store says why: answered already (and by whom), or never pending
            await session.claim(dict.fromkeys(gone, "{}"), run_id)
        answered = _answers(network, request, interrupts, calls)
        await session.claim(_claims(answered), run_id)
    except BaseException:
        await session.close()
        raise
    return answered


async def stopped_on_thread(
    network: NetworkLike, thread: ThreadRef, request: Resume | ToolResults
) -> RunResult:
    """A stand-in `RunResult` for what a stored thread waits on (a durable continuation by
    thread id records it as its `Stopped`). Answers to calls it no longer waits on are
    refused by the store (`AlreadyAnsweredError`), as in `continuation`."""
    session = await open_session(network, thread, create=False)
    try:
        waiting = list(session.pending)
        gone = _not_waiting(request, waiting)
        if gone:  # refused, whatever the run id: nothing is written
            await session.claim(dict.fromkeys(gone, "{}"), new_id("run_"))
    finally:
        await session.close()
    if not waiting:
        raise InterruptError(f"thread {thread.id!r} waits on no approval or client tool call")
    interrupts = [entry.interrupt() for entry in waiting if entry.kind == "interrupt"]
    return RunResult(
        stop_reason=StopReason.INTERRUPTED if interrupts else StopReason.CLIENT_TOOL,
        state=State(schema=network.schema),
        run_id=waiting[0].run_id or "",
        thread_id=thread.id,
        interrupts=interrupts,
        pending_tool_calls=[e.tool_call() for e in waiting if e.kind == "client_tool"],
        persisted=True,
    )


def _answers(
    network: NetworkLike,
    request: Resume | ToolResults,
    interrupts: Sequence[Interrupt],
    calls: Sequence[Any],
) -> Any:
    """The request's answers matched to what waits: `(Interrupt, Answer)` pairs for a
    `Resume` (edits checked against the tools' schemas), tool messages for `ToolResults`."""
    label = _label(request)
    if isinstance(request, Resume):
        if not interrupts:
            raise InterruptError(f"{label} did not stop on an interrupt")
        answered = match_answers(list(interrupts), request.answers)
        check_resumable(network, answered)
        check_edits(network, answered)
        return answered
    holder = _Waiting(label, list(calls))
    return result_messages(holder, request.results)  # type: ignore[arg-type]


class _Waiting:
    """What `result_messages` reads of a stopped run: its label and its pending calls."""

    def __init__(self, run_id: str, pending_tool_calls: list[Any]) -> None:
        self.run_id = run_id
        self.pending_tool_calls = pending_tool_calls


def _not_waiting(request: Resume | ToolResults, waiting: Sequence[Any]) -> list[str]:
    """The ids the request answers that the thread does not wait on."""
    ids = {entry.id for entry in waiting}
    named: list[Any]
    if isinstance(request, ToolResults):
        named = list(request.results)
    elif isinstance(request.answers, Mapping):
        named = list(request.answers)
    else:
        answers = [request.answers] if isinstance(request.answers, Answer) else request.answers
        named = [getattr(answer, "interrupt_id", None) for answer in answers]
    return [str(call_id) for call_id in named if isinstance(call_id, str) and call_id not in ids]


def _label(request: Resume | ToolResults) -> str:
    stopped = request.stopped
    return f"run {stopped.run_id!r}" if stopped is not None else "the thread"


def _claims(answered: Any) -> dict[str, str]:
    """What the store keeps with each answered call: the answer, as JSON text."""
    claims: dict[str, str] = {}
    for item in answered:
        if isinstance(item, ToolMessage):
            claims[item.tool_call_id] = json.dumps({"result": item.content})
        else:
            interrupt, answer = item
            claims[interrupt.id] = json.dumps(answer.to_json(), default=str)
    return claims


def _still_waiting(
    thread_id: str, stopped: RunResult, interrupts: Sequence[Interrupt], calls: Sequence[Any]
) -> None:
    """A stopped run whose calls the thread no longer waits on was answered already."""
    ids = [interrupt.id for interrupt in stopped.interrupts] + [
        call.id for call in stopped.pending_tool_calls
    ]
    waiting = {interrupt.id for interrupt in interrupts} | {call.id for call in calls}
    gone = [call_id for call_id in ids if call_id not in waiting]
    if gone:
        raise AlreadyAnsweredError(
            f"thread {thread_id!r}: {', '.join(gone)} answered already (the thread no longer "
            "waits on them); each pending call is answered once, and nothing ran this time",
            ids=gone,
        )


def claim_in_memory(stopped: RunResult, run_id: str) -> None:
    """Mark a result kept in memory as continued by `run_id`; `AlreadyAnsweredError` when
    another run continued it already (the same run id again is that run: a durable
    continuation replayed by id)."""
    if stopped.continued_by is not None and stopped.continued_by != run_id:
        calls = [i.id for i in stopped.interrupts] or [c.id for c in stopped.pending_tool_calls]
        raise AlreadyAnsweredError(
            f"run {stopped.run_id!r} was continued already (by run {stopped.continued_by!r}): "
            "its calls are answered once, and nothing ran this time",
            ids=calls,
            answered_by=stopped.continued_by,
        )
    stopped.continued_by = run_id


def _thread_of(
    request: Resume | ToolResults, stopped: RunResult | None, thread: ThreadRef | None
) -> ThreadRef | None:
    """The thread a continuation runs on: the stopped run's, or the one `thread=` names when
    the request carries no result; `thread=` may say the store, user and app to reopen it."""
    if stopped is None:
        if thread is None:
            raise ConfigurationError(
                f"{type(request).__name__} needs the run it continues: stopped=<RunResult>, "
                "or thread= naming the thread whose pending calls it answers"
            )
        return thread
    if not (stopped.persisted and stopped.thread_id is not None):
        if thread is not None:
            raise ConfigurationError(
                f"run {stopped.run_id!r} was not saved to a thread: thread= does not apply"
            )
        return None
    if thread is None:
        return ThreadRef(stopped.thread_id)
    if thread.id != stopped.thread_id:
        raise ConfigurationError(
            f"run {stopped.run_id!r} stopped on thread {stopped.thread_id!r}, not {thread.id!r}"
        )
    return thread


def _last_input(state: State) -> str:
    """The input of the run a thread's continuation continues: its last user message."""
    for message in reversed(state.messages):
        if isinstance(message, UserMessage):
            return message.content if isinstance(message.content, str) else ""
    return ""


def _copy_of(network: NetworkLike, stopped: RunResult, answered: Any) -> State:
    """A copy of a run's final state and conversation, rejected proposals undone."""
    data = stopped.state.snapshot()
    restore_rejected(data, answered)
    return State(data, schema=network.schema, messages=list(stopped.state.messages))
