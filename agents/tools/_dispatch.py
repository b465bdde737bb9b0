"""Running the tool calls of one model answer.

One way to run a tool call, in stages (`start_call`): find the tool (an unknown name is an
error result), run the agent's capabilities' `wrap_tool` stages around it, then try it: a plain sync
tool
(`inline`) tried once runs right here, without a coroutine; any other call is awaited, under
its time limit and `RetryPolicy`. Every outcome becomes a `ToolCallRecord` through the
record's own factories (`ToolCallRecord.succeeded` / `.failed`).

A batch (`start_tool_calls`): a lone call writes to the store directly, inside a savepoint
that is rolled back if it fails; several calls run concurrently in an anyio task group, each
on its own staged view of the state, and the views are committed in the order the model listed
the calls, so the outcome never depends on which call finished first. A call that failed, or
whose writes do not validate or merge, becomes an error result the model sees, and none of its
writes stay. In a durable run every call is recorded (`ctx.engine.steps.tool`).
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar, cast

import anyio

from agents.tools._result_text import tool_result_text
from agents.tools.tool import Tool
from agents.tools.tool_context import ToolContext
from network.errors import (
    Retry,
    RunStopped,
    ToolError,
    ToolStateWarning,
    UnstorableValueError,
)
from network.history.messages import ToolCall
from network.history.results import ToolCallRecord
from network.run.agent_call import AgentCall, ToolUse
from network.run.context import AgentLike, NetworkLike, RunContext
from network.run.events import ToolCallRetry
from network.run.retry_policy import RetryPolicy
from network.run.screening import log_screened
from network.run.stages import chain
from network.state.provenance import tool_writer
from network.state.staged import StagedKV
from network.state.state import State
from network.warned import warn_at

Records = list[ToolCallRecord]
Wraps = tuple[Callable[..., Any], ...]  # the `wrap_tool` stages of an agent's capabilities
Started = ToolCallRecord | Coroutine[Any, Any, ToolCallRecord]
P = ParamSpec("P")
T = TypeVar("T")


def time_limit(tool: Tool, agent: AgentLike, network: NetworkLike) -> float | None:
    """Seconds a call of `tool` may take: the tool's own, else the agent's, else the network's,
    else the tool kind's `default_timeout` (an MCP server's tools: a stranger that may never
    answer; a local tool has none).

    A plain sync tool runs on the event loop, where nothing can interrupt it, so only async
    and blocking tools are limited (`@tool(timeout=...)` makes a sync tool blocking).
    """
    if tool.timeout is not None:
        return tool.timeout
    limit = getattr(agent, "tool_timeout", None)
    if limit is None:
        limit = getattr(network, "tool_timeout", None)
    return limit if limit is not None else getattr(tool, "default_timeout", None)


def retry_policy(tool: Tool, agent: AgentLike, network: NetworkLike) -> RetryPolicy | None:
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
        return cast(RetryPolicy, policy)
    return None


def async_form(
    start: Callable[P, T | Coroutine[Any, Any, T]],
) -> Callable[P, Coroutine[Any, Any, T]]:
    """The async form of a start function (`start_call`, `start_tool_calls`), for callers
    that await anyway: its value, awaited when `start` could not finish without awaiting."""

    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        started = start(*args, **kwargs)
        return cast(T, await started if inspect.isawaitable(started) else started)

    return run


# -- one call --------------------------------------------------------------------------------


SHOWN_TOOLS = 50
"""The most tool names an unknown tool's error lists (an MCP server may list thousands; the
model has them all in its request anyway)."""


def _known(tools: Mapping[str, Tool]) -> str:
    """The names an unknown tool's error lists: the first `SHOWN_TOOLS`, and how many more."""
    names = list(tools)
    if not names:
        return "none"
    shown = ", ".join(names[:SHOWN_TOOLS])
    more = len(names) - SHOWN_TOOLS
    return f"{shown} and {more} more" if more > 0 else shown


def start_call(
    ctx: RunContext,
    agent: AgentLike,
    tools: Mapping[str, Tool],
    call: ToolCall,
    state: State,
    wraps: Wraps = (),
    agent_call: AgentCall | None = None,
) -> Started:
    """Run one tool call against `state` (the run's state or a staged view of it): its record
    when it ran without awaiting (an unknown tool, a plain sync tool tried once, with no
    capability around it), else the coroutine that runs it. `wraps`: the `wrap_tool` stages
    of the agent's capabilities (`network.run.capability`), run around the call."""
    started = time.perf_counter()
    tool = tools.get(call.name)
    if tool is None:
        # the name is the model's: echoed bounded (a model may send one of any length)
        asked = call.name if len(call.name) <= 100 else f"{call.name[:100]}..."
        message = f"unknown tool {asked!r} (available: {_known(tools)})"
        return ToolCallRecord.failed(call, message, "unknown_tool", started)
    if wraps:
        use = ToolUse(call, tool, state, ctx, agent, agent_call)
        proceed = functools.partial(run_call, ctx, agent, {call.name: tool}, call, state)
        return cast(Coroutine[Any, Any, ToolCallRecord], chain(wraps, proceed, use)())
    network = ctx.network
    policy = None
    # `retry_policy` is asked only when a policy is set anywhere (an MCP server's tool has none)
    if (
        getattr(tool, "retry", None) is not None
        or getattr(agent, "tool_retry", None) is not None
        or getattr(network, "tool_retry", None) is not None
    ):
        policy = retry_policy(tool, agent, network)
    if tool.inline and policy is None:
        # a tool that reads nothing of the run is given no ToolContext (`Tool.reads_run`)
        context = ToolContext(network, agent, state, call.id, ctx) if tool.reads_run else None
        return _attempt_inline(ctx, agent, tool, call, context, started)[0]
    return _awaited(ctx, agent, tool, call, state, policy, started)


run_call = async_form(start_call)
"""`start_call`, awaited to its record."""


async def _awaited(
    ctx: RunContext,
    agent: AgentLike,
    tool: Tool,
    call: ToolCall,
    state: State,
    policy: RetryPolicy | None,
    started: float,
) -> ToolCallRecord:
    """A call that must be awaited: under its time limit, tried as its `RetryPolicy` says."""
    timeout = None if tool.inline else time_limit(tool, agent, ctx.network)
    if policy is None:
        context = ToolContext(ctx.network, agent, state, call.id, ctx)
        return (await _attempt(ctx, tool, call, context, timeout, started))[0]
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
        if ctx.engine.emitter.active:
            await _announce_retry(ctx, call, record, attempt, wait)
        await anyio.sleep(wait)
        attempt += 1


async def _announce_retry(
    ctx: RunContext, call: ToolCall, record: ToolCallRecord, attempt: int, wait: float
) -> None:
    details = {
        "toolCallId": call.id,
        "tool": call.name,
        "attempt": attempt,
        "error": record.error,
        "errorType": record.error_type,
        "delay": wait,
    }
    await ctx.engine.emitter.emit(ToolCallRetry(details))


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
        return _attempt_inline(ctx, context.agent, tool, call, context, started)
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
        timed_out_after = timeout if timed_out else None
        return _failure(ctx, context.agent, tool, call, exc, timed_out_after, started)
    return _returned(ctx, tool, call, result, started), None


def _attempt_inline(
    ctx: RunContext,
    agent: AgentLike,
    tool: Tool,
    call: ToolCall,
    context: ToolContext | None,
    started: float,
) -> tuple[ToolCallRecord, Exception | None]:
    """`_attempt` for a plain sync tool: called on the event loop, no coroutine (`context`
    None for a tool that does not read the run: `Tool.reads_run`)."""
    try:
        result = tool.invoke_inline(call.arguments, context)
    except Exception as exc:
        return _failure(ctx, agent, tool, call, exc, None, started)
    if type(result) is str:
        return ToolCallRecord.succeeded(call, result, result, started), None
    return _returned(ctx, tool, call, result, started), None


def _returned(
    ctx: RunContext, tool: Tool, call: ToolCall, result: Any, started: float
) -> ToolCallRecord:
    """The record of a call that returned `result`: a success with the text the model reads,
    or a failure naming the tool when no text can be made of it (an int of more digits than
    Python turns into a string, a value nested too deeply, a `__str__` that raises): the
    model reads why, as for an exception the tool raised, and the call's writes are dropped.
    """
    try:
        content = tool_result_text(result)
    except Exception as exc:  # whatever the value's conversion raises: the tool's failure
        message = (
            f"tool {call.name!r} returned a value that cannot be made into text for the model: "
            f"{type(exc).__name__}: {_text_of(exc)}"
        )
        if tool.private_errors:  # the value's own exception may say what it holds
            return _private(ctx, call, exc, message, started)
        return ToolCallRecord.failed(call, message, type(exc).__name__, started)
    return ToolCallRecord.succeeded(call, result, content, started)


def _failure(
    ctx: RunContext,
    agent: AgentLike,
    tool: Tool,
    call: ToolCall,
    exc: Exception,
    timed_out_after: float | None,
    started: float,
) -> tuple[ToolCallRecord, Exception | None]:
    """The record of a failed try, and the exception when a `RetryPolicy` may retry it.

    `timed_out_after` is the limit when the call's own time limit stopped it (a
    `TimeoutError` the tool raised itself is its own failure)."""
    if isinstance(exc, ToolError):
        return ToolCallRecord.failed(call, _text_of(exc), type(exc).__name__, started), None
    if isinstance(exc, Retry):  # the tool asks the model to try again: see `Retry`
        return _model_retry(ctx, tool, call, exc, started), None
    if isinstance(exc, TimeoutError):
        if timed_out_after is None:
            message = f"tool {call.name!r} raised {type(exc).__name__}({_text_of(exc)!r})"
        else:
            message = f"tool {call.name!r} timed out after {timed_out_after:g} s"
            return ToolCallRecord.failed(call, message, "TimeoutError", started), exc
        if tool.private_errors:
            return _private(ctx, call, exc, message, started), exc
        return ToolCallRecord.failed(call, message, "TimeoutError", started), exc
    message = f"tool {call.name!r} raised {type(exc).__name__}: {_text_of(exc)}"
    if tool.private_errors:
        record = _private(ctx, call, exc, message, started)
    else:
        record = ToolCallRecord.failed(call, message, type(exc).__name__, started)
    if isinstance(exc, UnstorableValueError):  # a bug in the tool's code: tell the developer
        warn_at(  # the tool's own line: its code is what writes the unstorable value
            tool.fn,
            f"agent {agent.name!r}, tool {call.name!r}: {exc} (the tool's writes "
            "were rolled back and the model was told)",
            ToolStateWarning,
        )
        return record, None
    return record, exc


def _text_of(exc: BaseException) -> str:
    """`str(exc)`, or a placeholder when the exception's own `__str__` raises: the tool's
    failure is still the model's to read, never the run's crash."""
    try:
        return str(exc)
    except Exception:
        return f"<the text of {type(exc).__name__} could not be read: its __str__ raised>"


def _private(
    ctx: RunContext, call: ToolCall, exc: Exception, message: str, started: float
) -> ToolCallRecord:
    """The record of a `private_errors` tool's own exception: the model reads `message`
    (as `model_only`); the result a client sees names a reference the exception is logged
    under (`network.run.screening`)."""
    reference = log_screened(exc, run_id=ctx.run_id, tool=call.name, tool_call_id=call.id)
    shown = (
        f"tool {call.name!r} failed: internal error (reference {reference}); the server's log "
        "has the details"
    )
    return ToolCallRecord.failed(call, shown, type(exc).__name__, started, message)


def _model_retry(
    ctx: RunContext, tool: Tool, call: ToolCall, exc: Retry, started: float
) -> ToolCallRecord:
    """The error result of a `Retry`, counted against the tool's budget for the run."""
    used = ctx.engine.tool_retries.get(tool.name, 0)
    if used >= getattr(tool, "model_retries", 2):
        message = (
            f"tool {tool.name!r} gives up: it asked for a retry {used} times in this run "
            f"(its budget) and again now: {exc.message}"
        )
        return ToolCallRecord.failed(call, message, "RetryBudgetExceeded", started)
    ctx.engine.tool_retries[tool.name] = used + 1
    message = f"tool {tool.name!r} asks you to try again: {exc.message}"
    return ToolCallRecord.failed(call, message, "Retry", started)


# -- one answer's calls ----------------------------------------------------------------------


def start_tool_calls(
    ctx: RunContext,
    agent: AgentLike,
    tools: Mapping[str, Tool],
    calls: Sequence[ToolCall],
    wraps: Wraps = (),
    agent_call: AgentCall | None = None,
) -> Records | Coroutine[Any, Any, Records]:
    """Run `calls`, commit their state writes in model order: one record each, or the
    coroutine that finishes them when any call must be awaited.

    Every call given runs: holding calls back (for a person's confirmation, for a client)
    is the `tool_calls` stage's, before this one. `wraps`: the `wrap_tool` stages of the
    agent's capabilities, around each call.
    """
    if len(calls) != 1:
        return _run_concurrently(ctx, agent, tools, calls, wraps, agent_call)
    # One call cannot race another: it writes to the store directly, inside a savepoint
    # that is rolled back if it fails. Same outcome as staging, without the second pass.
    call = calls[0]
    kv: Any = ctx.state.kv
    previous = kv.writer
    mark = kv.savepoint()
    # `tool_writer`'s tuple, built here: this runs on every step's tool call
    kv.writer = (agent.name, ctx.call_count, call.name, call.id, "tool", None)
    try:
        if ctx.engine.steps is None:
            started = start_call(ctx, agent, tools, call, ctx.state, wraps, agent_call)
        else:  # a durable run: the call is recorded (network.run.steps)
            run = functools.partial(run_call, ctx, agent, tools, call, ctx.state, wraps, agent_call)
            started = ctx.engine.steps.tool(call.name, ctx.state, run)
    except BaseException:
        kv.writer = previous
        kv.rollback(mark)
        raise
    if type(started) is ToolCallRecord:
        kv.writer = previous
        if started.is_error:  # a failed call's writes are undone, a successful one's kept
            kv.rollback(mark)
        else:
            kv.release(mark)
        return [started]
    return _finish_lone(ctx, kv, previous, mark, cast(Coroutine[Any, Any, Any], started))


run_tool_calls = async_form(start_tool_calls)
"""`start_tool_calls`, awaited to its records."""


async def _finish_lone(
    ctx: RunContext,
    kv: Any,
    previous: Any,
    mark: Any,
    running: Coroutine[Any, Any, ToolCallRecord],
) -> Records:
    """The awaited part of a lone call: its writer restored and its savepoint closed after.
    While it runs, it is a tool call in flight (`RunContext.engine.tools_in_flight`)."""
    ctx.engine.tools_in_flight = 1
    try:
        record: ToolCallRecord = await running
    except BaseException:
        kv.rollback(mark)
        raise
    finally:
        ctx.engine.tools_in_flight = 0
        kv.writer = previous
    if record.is_error:
        kv.rollback(mark)
    else:
        kv.release(mark)
    return [record]


async def _run_concurrently(
    ctx: RunContext,
    agent: AgentLike,
    tools: Mapping[str, Tool],
    calls: Sequence[ToolCall],
    wraps: Wraps,
    agent_call: AgentCall | None,
) -> Records:
    """Several calls at once, each on a staged view; the views committed in model order."""
    kv = ctx.state.kv
    previous_writer = kv.writer
    views: list[State] = [ctx.state.for_tool() for _ in calls]
    records: list[ToolCallRecord | None] = [None] * len(calls)
    steps = ctx.engine.steps

    stopped: list[BaseException] = []  # a tool guardrail's trip: it stops every call

    async def run_one(index: int) -> None:
        view = views[index]
        try:
            call = calls[index]
            if steps is None:
                records[index] = await run_call(ctx, agent, tools, call, view, wraps, agent_call)
            else:  # a durable run: each call is recorded (network.run.steps)
                run = functools.partial(run_call, ctx, agent, tools, call, view, wraps, agent_call)
                records[index] = await steps.tool(call.name, view, run)
        except RunStopped as exc:  # a capability stopped the run: raised after the group
            stopped.append(exc)
            group.cancel_scope.cancel()

    ctx.engine.tools_in_flight = len(calls)  # started: a sub-run's budget counts them
    try:
        async with anyio.create_task_group() as group:
            for index in range(len(calls)):
                group.start_soon(run_one, index)
    finally:
        ctx.engine.tools_in_flight = 0
    if stopped:
        raise stopped[0]  # nothing is committed: the views are dropped

    done: Records = []
    for index, finished in enumerate(records):
        assert finished is not None
        record = finished
        staged = cast(StagedKV, views[index].kv)
        if not record.is_error and staged.dirty:
            kv.writer = tool_writer(agent.name, ctx.call_count, record.name, record.id)
            try:
                staged.commit()
            except Exception as exc:  # a merge or validation that only fails against the run
                message = f"tool {record.name!r} state update failed: {exc}"
                failed = ToolCallRecord.failed(
                    calls[index], message, type(exc).__name__, time.perf_counter()
                )
                record = failed
        done.append(record)
    kv.writer = previous_writer
    return done
