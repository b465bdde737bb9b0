"""Running a `Parallel` fan-out: the branches side by side, then the join.

Each branch gets its own `RunContext` (a copy of the run's, with `branch` set) over its own
State: a copy of the store (`BranchKV`), of the history and of the conversation as they were
at the fork. It runs its agent until it answers, or a network's router until it finishes
(`network.run.branch_run`), each call through the same per-agent-call path as any call of the
run (the loop's `call_agent`, handed in), so whatever wraps an agent call wraps a branch's
calls too. Events a branch emits carry its id (`branch`), and it never streams state: the
merged outcome is streamed once, at the join. Usage and `max_iter` count every branch's calls.

The join (`network.run.join`) merges the branches' writes in declared order; their results
join the history in declared order too, branch by branch, each naming its branch, each with
the state operations its writes produced at the join as its `state_delta`. The fan-out is one
step of the run (STEP_STARTED / STEP_FINISHED named after it), so a thread session commits it
as a whole.

In a durable run each branch gets its own step runner (`StepRunner.fork`), so its model and
tool calls are recorded under the branch and replay to it whatever the interleaving.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from network.history.messages import UserMessage
from network.history.results import InferenceResult
from network.history.view import HistoryView
from network.run.branch_run import (
    BranchBudget,
    CallAgent,
    FanOutRoom,
    RunLoop,
    own_results,
    run_branch,
    runs_a_network,
)
from network.run.context import RunContext
from network.run.emitter import Emitter
from network.run.events import (
    ReasoningEnded,
    ReasoningStarted,
    RunEvent,
    StepFinished,
    StepStarted,
    TextEnded,
    TextStarted,
    ToolCallEnded,
    ToolCallStarted,
)
from network.run.guardrails import GuardrailLog
from network.run.held_branches import Resuming
from network.run.join import Numbering, committed_writes, merge_branches, split_ops
from network.run.parallel import Branch, BranchFailure, Parallel
from network.run.result import Stop, StopReason
from network.run.steps import StepRunner
from network.run.temp_sources import keep_branch_texts
from network.state.branch import BranchKV, BranchWrite


class BranchEmitter(Emitter):
    """The run's emitter as a branch uses it: every event tagged with the branch's id.

    It keeps what the branch opened and has not closed (steps, messages, reasoning, tool
    calls), so that a branch that failed or was cancelled has them closed as they were
    opened, naming the branch (`close_left_open`): under `on_error="continue"` the run goes
    on, and its stream must not keep a step open that never finishes.
    """

    __slots__ = ("branch", "opened")

    def __init__(self, run: Emitter, branch: str) -> None:
        super().__init__()
        self.sinks = run.sinks
        self.active = run.active
        self.streaming = run.streaming
        # Shared with the run's emitter: a run that fails closes the branches' steps too.
        self.open_steps = run.open_steps
        self.open_messages = run.open_messages
        self.open_tools = run.open_tools
        self.open_reasoning = run.open_reasoning
        self.branch = branch
        self.opened: list[RunEvent] = []  # what the branch opened and has not closed yet

    async def emit(self, event: RunEvent) -> None:
        event.branch = self.branch
        kind = type(event)
        if kind in _CLOSED_BY:
            self.opened.append(event)
        elif kind in _CLOSES:
            key = _CLOSES[kind](event)
            for index in range(len(self.opened) - 1, -1, -1):
                if _KEY[type(self.opened[index])](self.opened[index]) == key:
                    del self.opened[index]
                    break
        for sink in self.sinks:
            await sink(event)

    async def close_messages(self) -> None:
        """Close the messages, reasoning and tool calls the branch has open (a call of its
        cut short by a stop), never a sibling's still streaming (`Emitter.close_messages`)."""
        await self.close_left_open(steps=False)

    async def close_left_open(self, steps: bool = True) -> None:
        """Close what the branch left open (it failed, or was cancelled), innermost first,
        each as the run's end would have closed it, but naming the branch; its open steps
        too, unless `steps` is False."""
        shared: dict[type[RunEvent], list[str]] = {
            StepStarted: self.open_steps,
            TextStarted: self.open_messages,
            ReasoningStarted: self.open_reasoning,
            ToolCallStarted: self.open_tools,
        }
        for event in reversed(list(self.opened)):
            if not steps and isinstance(event, StepStarted):
                continue  # (emitting its closing event below takes it off `opened`)
            if event.subagent_run_id is None:  # the run's lists hold its own (a step by name)
                key = event.name if isinstance(event, StepStarted) else _KEY[type(event)](event)
                left = shared[type(event)]
                if key in left:
                    left.remove(key)
            closing = _CLOSED_BY[type(event)](event)
            closing.subagent_run_id = event.subagent_run_id
            await self.emit(closing)

    async def flush_state(self, kv: Any) -> None:
        """Nothing: the join streams the merged state."""


# What a branch opens, the key it is known by, and how it is closed (`BranchEmitter`); a
# sub-run's events pass through its caller's emitter too, known by its run id besides.
_KEY: dict[type[RunEvent], Callable[[Any], Any]] = {
    StepStarted: lambda e: (e.name, e.fan_out, e.subagent_run_id),
    TextStarted: lambda e: e.message_id,
    ReasoningStarted: lambda e: e.message_id,
    ToolCallStarted: lambda e: e.call_id,
}
_CLOSED_BY: dict[type[RunEvent], Callable[[Any], RunEvent]] = {
    StepStarted: lambda e: StepFinished(e.name, fan_out=e.fan_out),
    TextStarted: lambda e: TextEnded(e.message_id),
    ReasoningStarted: lambda e: ReasoningEnded(e.message_id),
    ToolCallStarted: lambda e: ToolCallEnded(e.call_id),
}
_CLOSES: dict[type[RunEvent], Callable[[Any], Any]] = {
    StepFinished: lambda e: (e.name, e.fan_out, e.subagent_run_id),
    TextEnded: lambda e: e.message_id,
    ReasoningEnded: lambda e: e.message_id,
    ToolCallEnded: lambda e: e.call_id,
}


async def run_parallel(
    ctx: RunContext,
    fork: Parallel,
    max_iter: int,
    call_agent: CallAgent,
    run_loop: RunLoop,
    resuming: Resuming | None = None,
) -> Stop | None:
    """Run `fork` and join it into `ctx`; a `Stop` when it does not fit in `max_iter` or in
    the run's `max_model_calls` (each branch makes at least one model request), or when a
    branch's calls reached either (the run then stops after the join). `resuming`: the
    branches of a stopped fan-out that are entered again to finish their answered calls
    (`network.run.held_branches`), the others committed."""
    state = ctx.state
    # the committed siblings: of a re-run of failed branches, or of resumed ones
    done = finished_before(state.results, fork) if resuming is None else resuming.siblings
    todo = [branch for branch in fork.branches if branch.id not in done]
    if ctx.call_count + len(todo) > max_iter:
        return Stop(StopReason.MAX_ITER)
    enclosing = ctx.engine.fan_out_room  # inside a network branch: the run's cap holds too
    if enclosing is not None and not enclosing.take(len(todo) - 1):  # one was counted for it
        return Stop(StopReason.MAX_ITER)
    budget = ctx.engine.budget  # checked by the loop just before: its figures are current
    if budget is not None and budget.check_fan_out(len(todo)) is not None:
        return Stop(StopReason.USAGE_LIMIT)
    emitter = ctx.engine.emitter
    if emitter.active:
        emitter.open_steps.append(fork.name)
        await emitter.emit(StepStarted(fork.name, fan_out=fork.name))
    # a resumed branch's calls saw its own conversation, never the run's as it is now
    at_fork = state.history() if resuming is None else None
    forked_at, forked = time.time(), time.perf_counter()
    contexts = _branch_contexts(ctx, todo, resuming)
    ctx.engine.branch_contexts = tuple(contexts)
    room = FanOutRoom(max_iter - ctx.call_count - len(todo), parent=enclosing)
    run = functools.partial(
        run_branch,
        fork=fork,
        room=room,
        call_agent=call_agent,
        resumed=resuming.calls if resuming is not None else None,
    )
    try:
        outcomes = await _run_branches_and_join_steps(
            ctx, fork, todo, contexts, functools.partial(run, run_loop=run_loop)
        )
    finally:  # a failed branch's store is never merged: its temp: texts are masked all the same
        for branch_ctx in contexts:
            keep_branch_texts(ctx, branch_ctx.state.kv)
    ctx.engine.branch_contexts = ()
    if emitter.active:  # what failed or cancelled branches left open is closed, naming them
        for branch_ctx in contexts:
            await _branch_emitter(branch_ctx).close_left_open()
    errors = [error for error, _ in outcomes]
    failed = [i for i, error in enumerate(errors) if error is not None]
    if failed and fork.on_error == "fail":
        error = errors[failed[0]]  # the first in declared order: the same whatever the timing
        assert error is not None
        error.add_note(f"in parallel branch {todo[failed[0]].id!r}; nothing was merged")
        if emitter.active and fork.name in emitter.open_steps:  # closed as it was opened
            emitter.open_steps.remove(fork.name)
            await emitter.emit(StepFinished(fork.name, fan_out=fork.name))
        raise error
    await _join(ctx, fork, todo, contexts, errors, done, at_fork, forked_at, forked)
    if emitter.active:
        emitter.open_steps.remove(fork.name)
        await emitter.emit(StepFinished(fork.name, fan_out=fork.name))
    return next((stop for _, stop in outcomes if stop is not None), None)


def _branch_contexts(
    ctx: RunContext, todo: list[Branch], resuming: Resuming | None = None
) -> list[RunContext]:
    """One context per branch to run, sharing the run's guardrail log and, when the run has
    a budget, one budget the branches' requests count against as they are made; a resumed
    branch's over its own conversation as it stopped."""
    steps = ctx.engine.steps  # a durable run: each branch records its steps as its own
    runners = steps.fork([branch.id for branch in todo]) if steps is not None else None
    if ctx.engine.guardrails is None:  # one log the branches share: their checks count in the run
        ctx.engine.guardrails = GuardrailLog()
    contexts = [
        branch_context(
            ctx,
            branch,
            runners[i] if runners is not None else None,
            resuming.conversations.get(branch.id) if resuming is not None else None,
        )
        for i, branch in enumerate(todo)
    ]
    if resuming is not None:  # a mapped branch's input is its own
        for branch, branch_ctx in zip(todo, contexts, strict=True):
            branch_ctx.input = resuming.inputs.get(branch.id, branch_ctx.input)
    if ctx.engine.budget is not None:
        shared = BranchBudget(ctx, contexts)
        for branch_ctx in contexts:
            branch_ctx.engine.budget = shared  # type: ignore[assignment]  # (a Budget by its shape)
    return contexts


async def _run_branches_and_join_steps(
    ctx: RunContext, fork: Parallel, todo: list[Branch], contexts: list[RunContext], run: Any
) -> list[tuple[BaseException | None, Stop | None]]:
    """`_run_branches`, then (also when they raised) the durable run's step numbers joined:
    its next steps are numbered after the branches'."""
    steps = ctx.engine.steps
    try:
        outcomes = await _run_branches(fork, todo, contexts, run)
    except BaseException as exc:
        if steps is not None:
            try:
                steps.join()
            except Exception as join_error:  # the branches' error is the one to report
                exc.add_note(f"and the fan-out's step numbers could not be closed: {join_error}")
        raise
    if steps is not None:
        steps.join()
    return outcomes


async def _join(
    ctx: RunContext,
    fork: Parallel,
    todo: list[Branch],
    contexts: list[RunContext],
    errors: list[BaseException | None],
    done: dict[str, list[InferenceResult]],
    at_fork: HistoryView | None,
    forked_at: float,
    forked: float,
) -> None:
    """The branches' writes merged into the run's state and their results into its history,
    in declared order (see the module docstring)."""
    state = ctx.state
    made = [own_results(c) if e is None else [] for c, e in zip(contexts, errors, strict=True)]
    numbering, first = _numbering(ctx, todo, made)
    declared = _declared_writes(fork, todo, contexts, errors, done)
    ends = merge_branches(state.kv, declared, committed=done.keys(), numbering=numbering)
    if ctx.engine.emitter.active:  # the merged outcome streams once, before the ops become deltas
        await ctx.engine.emitter.flush_state(state.kv)
    deltas = iter(split_ops(state.kv.take_ops(), ends, range(ctx.call_count, first)))
    failures: list[BranchFailure] = []
    for branch, branch_ctx, error, results in zip(todo, contexts, errors, made, strict=True):
        if branch.input is not None:
            state.append_messages([UserMessage(branch.input)])
        # what it spent counts, also when it failed (its calls' tokens, its sub-runs' requests)
        ctx.engine.subagent_calls += branch_ctx.engine.subagent_calls
        ctx.engine.subagent_tool_calls += branch_ctx.engine.subagent_tool_calls
        ctx.add_usage(branch_ctx.usage)
        if error is None:
            _share_fork_prefix(branch, branch_ctx, results, at_fork)
            _add_branch_outcomes(ctx, branch_ctx)
        else:
            failure = BranchFailure(
                branch.id, branch.agent.name, type(error).__name__, str(error), error
            )
            failures.append(failure)
            results = [_failed_result(branch, branch_ctx, failure, forked_at, forked)]
        for result in results:
            result.state_delta = next(deltas)
            result.branch = branch.id
            state.add_result(result)  # a failed branch's result has no output: no messages
            ctx.call_count += 1
            ctx.last_result = result
    if failures:
        ctx.failed_branches += tuple(failures)


def _numbering(
    ctx: RunContext, todo: list[Branch], made: list[list[InferenceResult]]
) -> tuple[dict[str, Numbering], int]:
    """How each branch's calls are numbered again at the join, and the call number after
    the last branch's (a failed branch leaves one result)."""
    numbering: dict[str, Numbering] = {}
    first = ctx.call_count
    for branch, results in zip(todo, made, strict=True):
        local = 0 if runs_a_network(branch) else ctx.call_count  # where its context counted from
        numbering[branch.id] = Numbering(local, first, len(results))
        first += max(len(results), 1)
    return numbering, first


def _declared_writes(
    fork: Parallel,
    todo: list[Branch],
    contexts: list[RunContext],
    errors: list[BaseException | None],
    done: dict[str, list[InferenceResult]],
) -> list[tuple[str, list[BranchWrite]]]:
    """Each branch's writes in declared order: a branch that ran now, its store's; one
    committed by an earlier attempt, the writes its results recorded."""
    merging = {
        todo[i].id: _branch_kv(contexts[i]).writes for i, e in enumerate(errors) if e is None
    }
    for branch_id, earlier in done.items():
        merging[branch_id] = [
            write
            for result in earlier
            for write in committed_writes(result.agent, result.state_delta or [])
        ]
    return [(b.id, merging[b.id]) for b in fork.branches if b.id in merging]


def _share_fork_prefix(
    branch: Branch,
    branch_ctx: RunContext,
    results: list[InferenceResult],
    at_fork: HistoryView | None,
) -> None:
    """A branch's first result that saw the history as it was at the fork keeps the fork's
    view of it: the same messages, stored as the prefix (None: a resumed branch's did not)."""
    if results and branch.input is None and at_fork is not None:
        history = results[0].history
        if (
            isinstance(history, HistoryView)
            and history.is_view_of(branch_ctx.state.messages)
            and len(history) == len(at_fork)
        ):
            results[0].history = at_fork


def _add_branch_outcomes(ctx: RunContext, branch_ctx: RunContext) -> None:
    """What a branch that succeeded leaves the run: its interrupts, pending client tool calls,
    router calls and the failures of fan-outs inside it."""
    ctx.engine.interrupts += branch_ctx.engine.interrupts
    ctx.engine.pending_tool_calls += branch_ctx.engine.pending_tool_calls
    ctx.engine.router_calls += branch_ctx.engine.router_calls
    ctx.failed_branches += branch_ctx.failed_branches


def _failed_result(
    branch: Branch, branch_ctx: RunContext, failure: BranchFailure, forked_at: float, forked: float
) -> InferenceResult:
    """The one result a failed branch leaves: no output, the error it failed on."""
    return InferenceResult(
        branch.agent.name,
        branch_ctx.input,
        started_at=forked_at,
        duration_ms=(time.perf_counter() - forked) * 1000,
        error=f"{failure.error_type}: {failure.message}",
    )


async def _run_branches(
    fork: Parallel, todo: list[Branch], contexts: list[RunContext], run: Any
) -> list[tuple[BaseException | None, Stop | None]]:
    """Run the branches in one task group; returns each one's error (None: it succeeded)
    and the `Stop` it ended on, if any."""
    outcomes: list[tuple[BaseException | None, Stop | None]] = [(None, None)] * len(todo)
    limiter = anyio.CapacityLimiter(fork.max_concurrency) if fork.max_concurrency else None

    async with anyio.create_task_group() as group:

        async def one(index: int) -> None:
            try:
                if limiter is None:
                    stop = await run(contexts[index], todo[index])
                else:
                    async with limiter:
                        stop = await run(contexts[index], todo[index])
                outcomes[index] = (None, stop)
            except Exception as exc:  # the branch's failure: the fan-out's policy decides
                outcomes[index] = (exc, None)
                if fork.on_error == "fail":
                    group.cancel_scope.cancel()  # the others stop; nothing will be merged

        for index in range(len(todo)):
            group.start_soon(one, index)
    return outcomes


def branch_context(
    ctx: RunContext,
    branch: Branch,
    steps: StepRunner | None,
    conversation: Sequence[Any] | None = None,
) -> RunContext:
    """A branch's own context: the run's, over a copy of its state as it is now, with the
    branch's own step runner (`StepRunner.fork`) in a durable run. It counts its calls on
    from the run's (the join numbers them again, branch by branch) and its spending from
    nothing (the join adds it to the run's). `conversation`: the branch's own, instead of
    the run's (a resumed branch's, as it stopped)."""
    extra = [UserMessage(branch.input)] if branch.input is not None else None
    state = ctx.state.for_branch(BranchKV(ctx.state.kv), extra, conversation)
    return dataclasses.replace(
        ctx,
        state=state,
        input=branch.input if branch.input is not None else ctx.input,
        call_count=ctx.call_count,
        stack=[],
        agent=None,
        failed_branches=(),
        branch=branch,
        engine=dataclasses.replace(
            ctx.engine,
            prompt_tokens=0,
            completion_tokens=0,
            total_tokens=0,
            usage_estimated=False,
            cached_tokens=0,
            reasoning_tokens=0,
            emitter=BranchEmitter(ctx.engine.emitter, branch.id),
            interrupts=(),
            pending_tool_calls=(),
            failed_model_calls=(),
            router_calls=(),
            subagent_calls=(),
            subagent_tool_calls=0,
            subruns=(),
            branch_contexts=(),
            steps=steps,
        ),
    )


def _branch_emitter(ctx: RunContext) -> BranchEmitter:
    emitter = ctx.engine.emitter
    assert isinstance(emitter, BranchEmitter)
    return emitter


def _branch_kv(ctx: RunContext) -> BranchKV:
    kv = ctx.state.kv
    assert isinstance(kv, BranchKV)
    return kv


def finished_before(
    results: Sequence[InferenceResult], fork: Parallel
) -> dict[str, list[InferenceResult]]:
    """Branches of `fork` that succeeded in an attempt that left others failed, with their
    results in that attempt (their `state_delta`s say what they wrote: a re-run is checked
    against them).

    The history ends with the fan-out's results when a run stopped after it; a later run
    whose router returns the same fan-out then runs only the branches whose latest attempt
    failed. When every branch's latest attempt succeeded the fan-out was complete, and
    returning it again runs every branch anew.
    """
    ids = {branch.id for branch in fork.branches}
    latest: dict[str, list[InferenceResult]] = {}  # newest first
    closed: set[str] = set()  # branches whose latest attempt was read whole
    previous: str | None = None
    for result in reversed(results):
        branch = result.branch
        if branch is None or branch not in ids:
            break
        if previous is not None and branch != previous:
            closed.add(previous)
        previous = branch
        if branch in closed:
            continue  # an older attempt of this branch
        run = latest.setdefault(branch, [])
        if run and (result.error is not None or run[0].error is not None):
            closed.add(branch)  # a failed attempt is one result: this one is older
            continue
        run.append(result)
    if not any(run[0].error is not None for run in latest.values()):
        return {}
    return {branch: run[::-1] for branch, run in latest.items() if run[0].error is None}
