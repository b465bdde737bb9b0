"""The engine: execute one prepared run, from its first event to its `RunResult`.

Below the thread session and the facade: `Network.run` builds the context (and, on a thread,
the session whose sink commits), then calls `execute`. The engine knows the network only as a
`NetworkLike` and persistence only as one more event sink.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence

import anyio

from network.errors import GuardrailTripped, RunStopped, attach_partial_result
from network.history.messages import AssistantMessage
from network.run import lifecycle
from network.run.budgets.caller import enter, leave
from network.run.context import RunContext
from network.run.emitter import AnySink, Emitter, Observer
from network.run.logs import logging_sink
from network.run.loop import run_loop
from network.run.max_iter import check_max_iter
from network.run.result import RunResult, Stop, StopReason
from network.run.resumption import resume_interrupted
from network.run.subrun import SpentLater, count_capped_cost, report_spending
from network.run.temp_sources import attach_temp_masks, run_masks


async def execute(
    ctx: RunContext, *, max_iter: int | None = None, sinks: Sequence[AnySink | Observer] = ()
) -> RunResult:
    """Drive the loop for a prepared context, with its event sinks (the extension point).

    The resources the run opened (`ctx.engine.resources`) are closed when it ends, however it ends.
    """
    check_max_iter("max_iter", max_iter, optional=True, hint="leave it out for the network's")
    emitter = ctx.engine.emitter
    if sinks or emitter.active:  # else the context's own, still empty (one per run, not two)
        emitter = ctx.engine.emitter = Emitter(list(sinks))
    # the masks' partial is no local: kept only by a sink that logs (a waiting run's objects)
    log_sink = logging_sink(
        ctx.run_id,
        ctx.network.name,
        thread_id=ctx.thread_id,
        masks=functools.partial(run_masks, ctx),
    )
    if log_sink is not None:
        emitter.add_sink(Observer(log_sink))  # logging never makes a model stream
    started = time.perf_counter()
    thread_id = ctx.thread_id or ctx.run_id
    finished = False  # once RUN_FINISHED is out, nothing may follow it, not even RUN_ERROR
    events = emitter.active  # the run has a sink: its events are built
    running = enter(ctx)  # a run started inside this one counts against it (budgets.caller)
    try:
        if events:
            await lifecycle.open_run(ctx, thread_id)  # with the `run_started` stage
        else:
            for start in ctx.engine.stages.run_started:
                await start(ctx)
        stop = None
        if ctx.engine.resume:  # answers to the interrupts an earlier run stopped on
            try:
                stop = await resume_interrupted(ctx, max_iter or ctx.network.max_iter)
            except BaseException as error:
                if ctx.engine.stages.resumed:
                    with anyio.CancelScope(shield=True):
                        await resumed(ctx, error)
                raise
            if ctx.engine.stages.resumed:
                await resumed(ctx, None)
            if stop is None and ctx.engine.interrupts:  # a call it continued waits again
                stop = Stop(StopReason.INTERRUPTED)
            elif stop is None and ctx.engine.pending_tool_calls:  # a resumed branch's
                stop = Stop(StopReason.CLIENT_TOOL)
        if stop is None:
            stop = await run_loop(ctx, max_iter or ctx.network.max_iter)
        # the run's usage limits (network.run.limits) are the kernel's, checked by the loop
        # before each call; the budgets capability meters shared budgets only
        count_capped_cost(ctx)  # an unpriced last answer warns now, inside the run
        result = run_result(ctx, stop.reason, stop.summary, started, cause=stop.cause)
        if events:
            # what a stopped call showed and then undid is taken back (`KV.rollback`)
            await emitter.flush_state(ctx.state.kv)
            finished = True
            await lifecycle.finish_run(ctx, thread_id, result)
        return result
    except BaseException as error:
        partial = run_result(ctx, StopReason.ERROR, None, started, error=error)
        attach_partial_result(error, partial)
        attach_temp_masks(error, run_masks(ctx))  # for a server screening it for its client
        if events and not finished:
            with anyio.CancelScope(shield=True):
                await lifecycle.close_run(emitter, thread_id, ctx.run_id, error)
        await ctx.engine.resources.aclose(error)
        raise
    finally:
        leave(running)
        report_spending(ctx)  # a sub-run's last requests, told to its parent run
        resources = ctx.engine.resources  # closed already when the error path closed them
        if not resources.close_unopened():
            await resources.aclose()


async def resumed(ctx: RunContext, error: BaseException | None) -> None:
    """The run's `resumed` stages: the calls that took up its answers are done (`error`:
    what that step raised, else None)."""
    for stage in ctx.engine.stages.resumed:
        await stage(ctx, error)


def run_result(
    ctx: RunContext,
    reason: StopReason | str,
    summary: str | None,
    started: float,
    error: BaseException | None = None,
    cause: RunStopped | None = None,
) -> RunResult:
    """The `RunResult` of the run so far: its output is the last text of this run's calls.
    `cause`: the `RunStopped` a capability ended the run with (`Stop.cause`), whose detail
    the result carries (a guardrail's trip is its `guardrail`)."""
    output = None
    results = ctx.state.results  # a thread's earlier runs come first: skip them
    for result in reversed(results[len(results) - ctx.call_count :]):
        for message in result.output:  # `result.text` (its last message with text), inline
            if isinstance(message, AssistantMessage) and message.content:
                output = message.content
        if output is not None:
            break
    return RunResult(
        stop_reason=reason,
        state=ctx.state,
        run_id=ctx.run_id,
        output=summary if output is None and summary else output,
        usage=ctx.usage,
        thread_id=ctx.thread_id,
        summary=summary,
        duration_ms=(time.perf_counter() - started) * 1000,
        error=error,
        interrupts=list(ctx.engine.interrupts),
        pending_tool_calls=list(ctx.engine.pending_tool_calls),
        persisted=ctx.engine.persisted,
        limit_exceeded=ctx.engine.budget.exceeded if ctx.engine.budget is not None else None,
        spent_later=SpentLater(ctx),  # counted when `RunResult.spent` is first read
        trace_id=ctx.engine.trace_id,
        span_id=ctx.engine.span_id,
        failed_branches=list(ctx.failed_branches),
        # the trip that stopped the run (a branch's under on_error="continue" is that
        # branch's failure, `failed_branches`: it never becomes the run's stop)
        guardrail=cause if isinstance(cause, GuardrailTripped) else None,
        earlier_branch_results=list(ctx.engine.earlier_branch_results),
    )
