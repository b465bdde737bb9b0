"""Running a `Parallel` fan-out: the branches side by side, then the join.

Each branch gets its own `RunContext` (a copy of the run's, with `branch` set) over its own
State: a copy of the store (`BranchKV`), of the history and of the conversation as they were
at the fork. It runs through the same per-agent-call path as any call of the run (the loop's
`call_agent`, handed in), so whatever wraps an agent call wraps a branch too. Events a branch
emits carry its id (`branch`), and it never streams state: the merged outcome is streamed
once, at the join. Usage and `max_iter` count every branch.

The join (`network.run.join`) merges the branches' writes in declared order; their results
join the history in declared order too, each naming its branch, with the state operations
its writes produced at the join as its `state_delta`. The fan-out is one step of the run
(STEP_STARTED / STEP_FINISHED named after it), so a thread session commits it as a whole.

In a durable run each branch gets its own step runner (`StepRunner.fork`), so its model and
tool calls are recorded under the branch and replay to it whatever the interleaving.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from network.history.messages import UserMessage
from network.history.results import InferenceResult, Usage
from network.history.view import HistoryView
from network.run.context import RunContext
from network.run.emitter import Emitter
from network.run.guardrails import GuardrailLog
from network.run.join import committed_writes, merge_branches, split_ops
from network.run.parallel import Branch, BranchFailure, Parallel
from network.run.result import Stop, StopReason
from network.run.steps import StepRunner
from network.state.branch import BranchKV

CallAgent = Callable[[RunContext, Any], Awaitable[None]]


class BranchEmitter(Emitter):
    """The run's emitter as a branch uses it: every event tagged with the branch's id."""

    __slots__ = ("branch",)

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

    async def emit(self, event: Any) -> None:
        event.branch = self.branch  # AG-UI events accept extra fields; clients see `branch`
        for sink in self.sinks:
            await sink(event)

    async def flush_state(self, kv: Any) -> None:
        """Nothing: the join streams the merged state."""


async def run_parallel(
    ctx: RunContext, fork: Parallel, max_iter: int, call_agent: CallAgent
) -> Stop | None:
    """Run `fork` and join it into `ctx`; a `Stop` when it does not fit in `max_iter` or in
    the run's `max_model_calls` (each branch makes at least one model request)."""
    state = ctx.state
    done = finished_before(state.results, fork)  # committed siblings of a re-run
    todo = [branch for branch in fork.branches if branch.id not in done]
    if ctx.call_count + len(todo) > max_iter:
        return Stop(StopReason.MAX_ITER)
    budget = ctx.budget  # checked by the loop just before: its figures are current
    if budget is not None and budget.check_fan_out(len(todo)) is not None:
        return Stop(StopReason.USAGE_LIMIT)
    emitter = ctx.emitter
    if emitter.active:
        from network import events  # noqa: PLC0415 (ag_ui: only runs with a sink load it)

        emitter.open_steps.append(fork.name)
        started = events.step_started(fork.name)
        started.fan_out = fork.name  # type: ignore[attr-defined]  # (AG-UI allows extra fields)
        await emitter.emit(started)
    at_fork = state.history()
    # what the branches' sub-runs report comes after these (joined by `_spent_beside`)
    reported = (len(ctx.subagent_calls), ctx.subagent_tool_calls)
    forked_at, forked = time.time(), time.perf_counter()
    steps = ctx.steps  # a durable run: each branch records its steps as its own
    runners = steps.fork([branch.id for branch in todo]) if steps is not None else None
    if ctx.guardrails is None:  # one log the branches share: their checks count in the run
        ctx.guardrails = GuardrailLog()
    contexts = [
        branch_context(ctx, branch, ctx.call_count + i, runners[i] if runners is not None else None)
        for i, branch in enumerate(todo)
    ]
    ctx.branch_contexts = tuple(contexts)
    try:
        errors = await _run_branches(fork, todo, contexts, call_agent)
    except BaseException as exc:
        if steps is not None:
            try:
                steps.join()
            except Exception as join_error:  # the branches' error is the one to report
                exc.add_note(f"and the fan-out's step numbers could not be closed: {join_error}")
        raise
    if steps is not None:
        steps.join()  # a durable run's next steps are numbered after the branches'
    ctx.branch_contexts = ()
    failed = [i for i, error in enumerate(errors) if error is not None]
    if failed and fork.on_error == "fail":
        error = errors[failed[0]]  # the first in declared order: the same whatever the timing
        assert error is not None
        error.add_note(f"in parallel branch {todo[failed[0]].id!r}; nothing was merged")
        raise error
    kv = state.kv
    merging = {
        todo[i].id: _branch_kv(contexts[i]).writes for i, e in enumerate(errors) if e is None
    }
    for branch_id, earlier in done.items():
        merging[branch_id] = committed_writes(earlier.agent, earlier.state_delta or [])
    declared = [(b.id, merging[b.id]) for b in fork.branches if b.id in merging]
    ends = merge_branches(kv, declared, committed=done.keys())
    if emitter.active:
        await emitter.flush_state(kv)
    deltas = iter(split_ops(kv.take_ops(), ends))
    failures: list[BranchFailure] = []
    for branch, branch_ctx, error in zip(todo, contexts, errors, strict=True):
        if branch.input is not None:
            state.append_messages([UserMessage(branch.input)])
        if error is None:
            result = branch_ctx.state.results[-1]
            result.state_delta = next(deltas)
            history = result.history
            if (
                branch.input is None
                and isinstance(history, HistoryView)
                and history.is_view_of(branch_ctx.state.messages)
                and len(history) == len(at_fork)
            ):
                result.history = at_fork  # the same messages: stored as the thread's prefix
            ctx.interrupts += branch_ctx.interrupts
            ctx.pending_tool_calls += branch_ctx.pending_tool_calls
        else:
            failure = BranchFailure(
                branch.id, branch.agent.name, type(error).__name__, str(error), error
            )
            failures.append(failure)
            result = InferenceResult(
                branch.agent.name,
                branch_ctx.input,
                started_at=forked_at,
                duration_ms=(time.perf_counter() - forked) * 1000,
                error=f"{failure.error_type}: {failure.message}",
            )
        result.branch = branch.id
        state.add_result(result)  # a failed branch's result has no output: no messages
        ctx.add_usage(result.usage)
        _spent_beside(ctx, branch_ctx, result.usage if error is None else Usage(), reported)
        ctx.call_count += 1
        ctx.last_result = result
    if failures:
        ctx.failed_branches += tuple(failures)
    if emitter.active:
        emitter.open_steps.remove(fork.name)
        finished = events.step_finished(fork.name)
        finished.fan_out = fork.name  # type: ignore[attr-defined]
        await emitter.emit(finished)
    return None


async def _run_branches(
    fork: Parallel, todo: list[Branch], contexts: list[RunContext], call_agent: CallAgent
) -> list[BaseException | None]:
    """Run the branches in one task group; returns each one's error (None: it succeeded)."""
    errors: list[BaseException | None] = [None] * len(todo)
    limiter = anyio.CapacityLimiter(fork.max_concurrency) if fork.max_concurrency else None

    async with anyio.create_task_group() as group:

        async def run(index: int) -> None:
            try:
                if limiter is None:
                    await call_agent(contexts[index], todo[index].agent)
                else:
                    async with limiter:
                        await call_agent(contexts[index], todo[index].agent)
            except Exception as exc:  # the branch's failure: the fan-out's policy decides
                errors[index] = exc
                if fork.on_error == "fail":
                    group.cancel_scope.cancel()  # the others stop; nothing will be merged

        for index in range(len(todo)):
            group.start_soon(run, index)
    return errors


def branch_context(
    ctx: RunContext, branch: Branch, call_index: int, steps: StepRunner | None
) -> RunContext:
    """A branch's own context: the run's, over a copy of its state as it is now, with the
    branch's own step runner (`StepRunner.fork`) in a durable run."""
    extra = [UserMessage(branch.input)] if branch.input is not None else None
    state = ctx.state.for_branch(BranchKV(ctx.state.kv), extra)
    return dataclasses.replace(
        ctx,
        state=state,
        input=branch.input if branch.input is not None else ctx.input,
        call_count=call_index,
        stack=[],
        agent=None,
        prompt_tokens=0,
        completion_tokens=0,
        total_tokens=0,
        usage_estimated=False,
        emitter=BranchEmitter(ctx.emitter, branch.id),
        interrupts=(),
        pending_tool_calls=(),
        failed_model_calls=(),
        branch=branch,
        branch_contexts=(),
        steps=steps,
    )


def _spent_beside(
    ctx: RunContext, branch: RunContext, recorded: Usage, reported: tuple[int, int]
) -> None:
    """What a branch spent beside its recorded call, joined into the run: its sub-runs'
    requests and tool calls, and the tokens they and its guardrails counted on the branch's
    context (which started at zero; `recorded`, its call's own, the join adds itself)."""
    calls, tools = reported
    ctx.subagent_calls = (*ctx.subagent_calls, *branch.subagent_calls[calls:])
    ctx.subagent_tool_calls += branch.subagent_tool_calls - tools
    beside = Usage(
        branch.prompt_tokens - recorded.prompt_tokens,
        branch.completion_tokens - recorded.completion_tokens,
        branch.total_tokens - recorded.total_tokens,
        branch.usage_estimated,
    )
    if beside.prompt_tokens or beside.completion_tokens or beside.total_tokens:
        ctx.add_usage(beside)


def _branch_kv(ctx: RunContext) -> BranchKV:
    kv = ctx.state.kv
    assert isinstance(kv, BranchKV)
    return kv


def finished_before(
    results: Sequence[InferenceResult], fork: Parallel
) -> dict[str, InferenceResult]:
    """Branches of `fork` that succeeded in an attempt that left others failed, with their
    latest result (its `state_delta` says what they wrote: a re-run is checked against it).

    The history ends with the fan-out's results when a run stopped after it; a later run
    whose router returns the same fan-out then runs only the branches whose latest result
    is a failure. When every branch's latest result succeeded the fan-out was complete, and
    returning it again runs every branch anew.
    """
    ids = {branch.id for branch in fork.branches}
    latest: dict[str, InferenceResult] = {}
    for result in reversed(results):
        if result.branch not in ids:
            break
        latest.setdefault(result.branch, result)
    if not any(result.error is not None for result in latest.values()):
        return {}
    return {branch: result for branch, result in latest.items() if result.error is None}
