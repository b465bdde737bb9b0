"""Running the tool calls of one model answer.

Calls run concurrently in an anyio task group (a single call is awaited directly: a task group
costs more than most tools take). Each call writes to its own staged view of the state; once
all have returned, the views are committed in the order the model listed the calls, so the
outcome never depends on which call finished first. A call that failed, or whose writes do
not validate or merge, becomes an error result the model sees, and none of its writes stay.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Sequence
from typing import Any, cast

import anyio

from agents.tools._predictive import write_predicted
from agents.tools.tool import Tool, tool_result_text
from agents.tools.tool_context import ToolContext
from network.errors import Retry, StateError, ToolError, ToolStateWarning, UnstorableValueError
from network.history.messages import ToolCall
from network.history.results import ToolCallRecord
from network.run.context import RunContext
from network.run.retry_policy import RetryPolicy
from network.state.provenance import tool_writer
from network.state.staged import StagedKV
from network.state.state import State


def _error_record(call: ToolCall, message: str, started: float, error_type: str) -> ToolCallRecord:
    return _record(call, None, f"Error: {message}", message, started, error_type)


def _record(
    call: ToolCall,
    result: Any,
    content: str,
    error: str | None,
    started: float,
    error_type: str | None = None,
) -> ToolCallRecord:
    took = time.perf_counter() - started
    return ToolCallRecord(
        call.id,
        call.name,
        call.arguments,
        result,
        content,
        error is not None,
        error,
        took * 1000,
        time.time() - took,
        error_type,
    )


def time_limit(tool: Tool, agent: Any, network: Any) -> float | None:
    """Seconds a call of `tool` may take: the tool's own, else the agent's, else the network's.

    A plain sync tool runs on the event loop, where nothing can interrupt it, so only async
    and blocking tools are limited (`@tool(timeout=...)` makes a sync tool blocking).
    """
    if tool.timeout is not None:
        return tool.timeout
    limit = getattr(agent, "tool_timeout", None)
    return limit if limit is not None else getattr(network, "tool_timeout", None)


async def run_tool(
    ctx: RunContext, agent: Any, tools: dict[str, Tool], call: ToolCall, state: State
) -> ToolCallRecord:
    """Run one tool call against `state` (the run's state or a staged view of it)."""
    record = run_tool_now(ctx, agent, tools, call, state)
    if record is not None:
        return record
    started = time.perf_counter()
    tool = tools[call.name]
    failed = _predict(ctx, tool, call, state, started)
    if failed is not None:
        return failed
    timeout = None if tool.inline else time_limit(tool, agent, ctx.network)
    policy = retry_policy(tool, agent, ctx.network)
    if policy is not None:
        return await _with_retries(ctx, agent, tool, call, state, timeout, policy, started)
    context = ToolContext(ctx.network, agent, state, call.id, ctx)
    record, _ = await _attempt(ctx, tool, call, context, timeout, started)
    return record


def run_tool_now(
    ctx: RunContext, agent: Any, tools: dict[str, Tool], call: ToolCall, state: State
) -> ToolCallRecord | None:
    """`run_tool` without a coroutine, for a call that needs no awaiting: of an unknown tool,
    or of a plain sync tool (`inline`) without a retry policy. None for any other call, with
    nothing done (`run_tool` runs it)."""
    tool = tools.get(call.name)
    if tool is not None and not _runs_now(tool, agent, ctx.network):
        return None
    return _run_now(ctx, agent, tools, tool, call, state)


def _runs_now(tool: Tool, agent: Any, network: Any) -> bool:
    """Whether a call of `tool` needs no awaiting (see `run_tool_now`)."""
    return tool.inline and retry_policy(tool, agent, network) is None


def _run_now(
    ctx: RunContext,
    agent: Any,
    tools: dict[str, Tool],
    tool: Tool | None,
    call: ToolCall,
    state: State,
) -> ToolCallRecord:
    """`run_tool_now` once `_runs_now` said yes (or the tool is unknown)."""
    started = time.perf_counter()
    if tool is None:
        known = ", ".join(tools) or "none"
        return _error_record(
            call, f"unknown tool {call.name!r} (available: {known})", started, "unknown_tool"
        )
    failed = _predict(ctx, tool, call, state, started)
    if failed is not None:
        return failed
    context = ToolContext(ctx.network, agent, state, call.id, ctx)
    return _attempt_inline(ctx, tool, call, context, started)[0]


def retry_policy(tool: Tool, agent: Any, network: Any) -> RetryPolicy | None:
    """The `RetryPolicy` that applies to calls of `tool`, or None when they are tried once."""
    # getattr: a tool of another kind (an MCP server's) may not carry a policy of its own
    policy = (
        getattr(tool, "retry", None)
        or getattr(agent, "tool_retry", None)
        or getattr(network, "tool_retry", None)
    )
    if (
        policy is not None
        and policy.max_attempts > 1
        and (getattr(tool, "idempotent", False) or policy.explicit)
    ):
        return policy  # type: ignore[no-any-return]
    return None


def _predict(
    ctx: RunContext, tool: Tool, call: ToolCall, state: State, started: float
) -> ToolCallRecord | None:
    """Predicted keys take the argument's value before the tool runs; an error record when
    that fails."""
    predict_state = getattr(ctx.network, "predict_state", None)
    if not predict_state:
        return None
    try:
        write_predicted(predict_state, tool, call, state.kv)
    except ToolError as exc:
        return _error_record(call, str(exc), started, type(exc).__name__)
    except StateError as exc:
        return _error_record(
            call, f"tool {call.name!r} state update failed: {exc}", started, type(exc).__name__
        )
    return None


async def _attempt(
    ctx: RunContext,
    tool: Tool,
    call: ToolCall,
    context: ToolContext,
    timeout: float | None,
    started: float,
) -> tuple[ToolCallRecord, Exception | None]:
    """One try of a call: its record (a failure included), and the exception behind a
    failure a `RetryPolicy` may retry (None for success, `ToolError`s and `Retry`)."""
    if tool.inline:
        return _attempt_inline(ctx, tool, call, context, started)
    timed_out = False
    try:
        if timeout is None:
            result = await tool.invoke(call.arguments, context)
        else:
            with anyio.fail_after(timeout) as scope:
                result = await tool.invoke(call.arguments, context)
    except Exception as exc:
        if isinstance(exc, TimeoutError) and timeout is not None:
            timed_out = scope.cancel_called
        return _failure(ctx, tool, call, context, exc, timeout if timed_out else None, started)
    return _record(call, result, tool_result_text(result), None, started), None


def _attempt_inline(
    ctx: RunContext, tool: Tool, call: ToolCall, context: ToolContext, started: float
) -> tuple[ToolCallRecord, Exception | None]:
    """`_attempt` for a plain sync tool: called on the event loop, no coroutine."""
    try:
        result = tool.invoke_inline(call.arguments, context)
    except Exception as exc:
        return _failure(ctx, tool, call, context, exc, None, started)
    return _record(call, result, tool_result_text(result), None, started), None


def _failure(
    ctx: RunContext,
    tool: Tool,
    call: ToolCall,
    context: ToolContext,
    exc: Exception,
    timed_out_after: float | None,
    started: float,
) -> tuple[ToolCallRecord, Exception | None]:
    """The record of a failed try, and the exception when a `RetryPolicy` may retry it.

    `timed_out_after` is the limit when the call's own time limit stopped it (a
    `TimeoutError` the tool raised itself is its own failure)."""
    if isinstance(exc, ToolError):
        return _error_record(call, str(exc), started, type(exc).__name__), None
    if isinstance(exc, Retry):  # the tool asks the model to try again: see `Retry`
        return _model_retry(ctx, tool, call, exc, started), None
    if isinstance(exc, TimeoutError):
        if timed_out_after is None:
            message = f"tool {call.name!r} raised {exc!r}"
        else:
            message = f"tool {call.name!r} timed out after {timed_out_after:g} s"
        return _error_record(call, message, started, "TimeoutError"), exc
    message = f"tool {call.name!r} raised {type(exc).__name__}: {exc}"
    if isinstance(exc, UnstorableValueError):  # a bug in the tool's code: tell the developer
        warnings.warn(
            ToolStateWarning(
                f"agent {context.agent.name!r}, tool {call.name!r}: {exc} (the tool's writes "
                "were rolled back and the model was told)"
            ),
            stacklevel=1,
        )
        return _error_record(call, message, started, type(exc).__name__), None
    return _error_record(call, message, started, type(exc).__name__), exc


def _model_retry(
    ctx: RunContext, tool: Tool, call: ToolCall, exc: Retry, started: float
) -> ToolCallRecord:
    """The error result of a `Retry`, counted against the tool's budget for the run."""
    used = ctx.tool_retries.get(tool.name, 0)
    if used >= getattr(tool, "model_retries", 2):
        return _error_record(
            call,
            f"tool {tool.name!r} gives up: it asked for a retry {used} times in this run "
            f"(its budget) and again now: {exc.message}",
            started,
            "RetryBudgetExceeded",
        )
    ctx.tool_retries[tool.name] = used + 1
    return _error_record(
        call, f"tool {tool.name!r} asks you to try again: {exc.message}", started, "Retry"
    )


async def _with_retries(
    ctx: RunContext,
    agent: Any,
    tool: Tool,
    call: ToolCall,
    state: State,
    timeout: float | None,
    policy: RetryPolicy,
    started: float,
) -> ToolCallRecord:
    """Try the call up to `policy.max_attempts` times; a failed try's writes are dropped."""
    kv: Any = state.kv
    attempt = 1
    while True:
        mark = kv.savepoint()
        context = ToolContext(ctx.network, agent, state, call.id, ctx, attempt, policy.max_attempts)
        record, error = await _attempt(ctx, tool, call, context, timeout, started)
        if error is None or attempt >= policy.max_attempts or not policy.retries(error):
            if record.is_error:
                kv.rollback(mark)
            else:
                kv.release(mark)
            record.attempts = attempt
            return record
        kv.rollback(mark)  # the failed try leaves nothing behind
        wait = policy.delay(attempt, error)
        if ctx.emitter.active:
            from network import events  # noqa: PLC0415 (ag_ui: only runs with a sink load it)

            await ctx.emitter.emit(
                events.custom(
                    "TOOL_CALL_RETRY",
                    {
                        "toolCallId": call.id,
                        "tool": call.name,
                        "attempt": attempt,
                        "error": record.error,
                        "errorType": record.error_type,
                        "delay": wait,
                    },
                )
            )
        await anyio.sleep(wait)
        attempt += 1


def run_tool_calls_now(
    ctx: RunContext, agent: Any, tools: dict[str, Tool], calls: Sequence[ToolCall]
) -> list[ToolCallRecord] | None:
    """`run_tool_calls` without a coroutine, when it needs no awaiting: one call of a plain
    sync tool without a retry policy (or of an unknown tool), outside a durable run. None
    otherwise, with nothing done: await `run_tool_calls` then."""
    if len(calls) != 1 or ctx.steps is not None:
        return None
    call = calls[0]
    tool = tools.get(call.name)
    network = ctx.network
    if tool is not None and not (
        tool.inline
        and (
            # `retry_policy` is None when no policy is set anywhere: asked only when one is
            (
                tool.retry is None
                and getattr(agent, "tool_retry", None) is None
                and getattr(network, "tool_retry", None) is None
            )
            or retry_policy(tool, agent, network) is None
        )
    ):
        return None
    # `_open_single`, `_run_now`, `_attempt_inline`, `_record`, `tool_writer` and
    # `_close_single` written out: this is every step's tool call, and each of those layers
    # was a Python call of its own.
    state = ctx.state
    kv = state.kv
    previous = kv.writer
    mark = kv.savepoint()
    kv.writer = (agent.name, ctx.call_count, call.name, call.id, "tool", None)  # tool_writer
    try:
        if tool is None or getattr(network, "predict_state", None):
            record = _run_now(ctx, agent, tools, tool, call, state)
        else:
            started = time.perf_counter()
            context = ToolContext(network, agent, state, call.id, ctx)
            try:
                result = tool.invoke_inline(call.arguments, context)
            except Exception as exc:
                record = _failure(ctx, tool, call, context, exc, None, started)[0]
            else:
                took = time.perf_counter() - started
                record = ToolCallRecord(
                    call.id,
                    call.name,
                    call.arguments,
                    result,
                    result if type(result) is str else tool_result_text(result),
                    False,
                    None,
                    took * 1000,
                    time.time() - took,
                )
    except BaseException:
        kv.rollback(mark)
        raise
    finally:
        kv.writer = previous
    if record.is_error:
        kv.rollback(mark)
    else:
        kv.release(mark)
    return [record]


async def run_tool_calls(
    ctx: RunContext,
    agent: Any,
    tools: dict[str, Tool],
    calls: list[ToolCall],
) -> list[ToolCallRecord]:
    """Run `calls`, commit their state writes in model order, and return one record each.

    Every call given runs: holding calls back for a person's confirmation is the agent's
    step, before this one (`agents.tools._confirmation`).
    """
    if len(calls) != 1:
        return await _run_concurrently(ctx, agent, tools, calls)
    # One call cannot race another: it writes to the store directly, inside a savepoint
    # that is rolled back if it fails. Same outcome as staging, without the second pass.
    call = calls[0]
    kv, previous, mark = _open_single(ctx, agent, call)
    steps = ctx.steps
    try:
        if steps is None:
            record = await run_tool(ctx, agent, tools, call, ctx.state)
        else:  # a durable run: the call is recorded (network.run.steps)
            run = functools.partial(run_tool, ctx, agent, tools, call, ctx.state)
            record = await steps.tool(call.name, ctx.state, run)
    except BaseException:
        kv.rollback(mark)
        raise
    finally:
        kv.writer = previous
    _close_single(kv, mark, record)
    return [record]


def _open_single(ctx: RunContext, agent: Any, call: ToolCall) -> tuple[Any, Any, Any]:
    """Before a lone call: the store, its writer to restore, and a savepoint; the call's
    writes are attributed to it."""
    kv = ctx.state.kv
    previous = kv.writer
    mark = kv.savepoint()
    kv.writer = tool_writer(agent.name, ctx.call_count, call.name, call.id)
    return kv, previous, mark


def _close_single(kv: Any, mark: Any, record: ToolCallRecord) -> None:
    """After a lone call: a failed call's writes are undone, a successful one's kept."""
    if record.is_error:
        kv.rollback(mark)
    else:
        kv.release(mark)


async def _run_concurrently(
    ctx: RunContext,
    agent: Any,
    tools: dict[str, Tool],
    calls: list[ToolCall],
) -> list[ToolCallRecord]:
    """Several calls at once, each on a staged view; the views committed in model order."""
    kv = ctx.state.kv
    previous_writer = kv.writer
    views: list[State] = [ctx.state.for_tool() for _ in calls]
    records: list[ToolCallRecord | None] = [None] * len(calls)

    steps = ctx.steps

    async def run_one(index: int) -> None:
        view = views[index]
        if steps is None:
            records[index] = await run_tool(ctx, agent, tools, calls[index], view)
        else:  # a durable run: each call is recorded (network.run.steps)
            run = functools.partial(run_tool, ctx, agent, tools, calls[index], view)
            records[index] = await steps.tool(calls[index].name, view, run)

    async with anyio.create_task_group() as group:
        for index in range(len(calls)):
            group.start_soon(run_one, index)

    done: list[ToolCallRecord] = []
    for index, finished in enumerate(records):
        assert finished is not None
        record = finished
        staged = cast(StagedKV, views[index].kv)
        if not record.is_error and staged.dirty:
            kv.writer = tool_writer(agent.name, ctx.call_count, record.name, record.id)
            try:
                staged.commit()
            except Exception as exc:  # a merge or validation that only fails against the run
                record = _error_record(
                    calls[index],
                    f"tool {record.name!r} state update failed: {exc}",
                    time.perf_counter(),
                    type(exc).__name__,
                )
        done.append(record)
    kv.writer = previous_writer
    return done
