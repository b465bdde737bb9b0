"""The events that open and close a run (only used when the run has a sink).

Typed (`network.run.events`); named below as their AG-UI encoding shows them.

Order, as AG-UI clients enforce it:

- RUN_STARTED (threadId, runId, protocolVersion), then CUSTOM "PredictState" when the network
  declares `predict_state`, then STATE_SNAPSHOT of the state the run starts from;
- at the end RUN_FINISHED, whose `result` is `{"output", "stopReason"}` (plus `"summary"`
  when a router's `Stop` gave one), or whose `outcome` is an interrupt when a tool waits for
  confirmation; its `usage` is the run's token usage per provider and model
  (`network.run.usage_report`), absent when the run spent nothing;
- on an error: every open tool call, message and step is closed, then RUN_ERROR, and nothing
  after it; on cancellation the same closing events, then RUN_FINISHED with the "cancelled"
  outcome (the run was stopped from outside, it did not fail).
"""

from __future__ import annotations

from typing import Any

import anyio

from network.run.context import RunContext
from network.run.emitter import Emitter, best_effort
from network.run.events import (
    RunCancelled,
    RunError,
    RunFinished,
    RunInterrupted,
    RunStarted,
    StateSnapshot,
    StepFinished,
)
from network.run.usage_report import run_token_usage


async def open_run(ctx: RunContext, thread_id: str) -> None:
    """RUN_STARTED, the capabilities' `run_started` stage (predictive state's announcement),
    and the first STATE_SNAPSHOT."""
    emitter = ctx.engine.emitter
    await emitter.emit(RunStarted(thread_id, ctx.run_id, ctx.engine.trace_id, ctx.engine.span_id))
    for start in ctx.engine.stages.run_started:  # the capabilities' start (predictive state's, ...)
        await start(ctx)
    await emitter.emit(StateSnapshot(ctx.state.snapshot()))


async def finish_run(ctx: RunContext, thread_id: str, result: Any) -> None:
    """RUN_FINISHED with the run's output, or with the interrupts it stopped on."""
    payload = {"output": result.output, "stopReason": str(result.stop_reason)}
    if result.summary is not None:  # what a router's Stop said: the run's own account of it
        payload["summary"] = result.summary
    usage = run_token_usage(ctx) or None
    event: RunFinished
    if result.interrupts:
        event = RunInterrupted(thread_id, ctx.run_id, payload, usage, list(result.interrupts))
    else:
        event = RunFinished(thread_id, ctx.run_id, payload, usage)
    await ctx.engine.emitter.emit(event)


async def close_run(emitter: Emitter, thread_id: str, run_id: str, error: BaseException) -> None:
    """Close every open tool call, message and step; then RUN_ERROR (or cancelled RUN_FINISHED).

    Each event goes to each sink on its own, so a consumer that is gone (a closed stream, a
    dropped connection) does not keep the others, such as the logs, from hearing the end.
    """
    sinks = list(emitter.sinks)
    await emitter.close_messages()
    for step in reversed(emitter.open_steps):
        await best_effort(sinks, StepFinished(step))
    emitter.open_steps.clear()
    if isinstance(error, anyio.get_cancelled_exc_class()):
        await best_effort(sinks, RunCancelled(thread_id, run_id))
        return
    name = type(error).__name__
    await best_effort(sinks, RunError(f"{name}: {error}", code=name))
