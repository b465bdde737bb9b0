"""Running guardrails: several on one value at once, and input guardrails beside the model
call they check (`network.run.guardrails` says what a guardrail is).

Decisions where the issue is silent:
- Several guardrails on one value run concurrently; the first trip cancels the others (a
  cancelled check is recorded, with no result), so which one is reported when two would trip
  depends on timing, as with the OpenAI Agents SDK's.
- A guardrail that raises fails the run with its own exception: a check that could not run
  never lets a call through silently.
- A guardrail's model requests need room under `max_model_calls` beside the requests of the
  call it checks that are not recorded yet: when there is none, the run stops with
  `StopReason.USAGE_LIMIT` before anything is asked (`LimitReached`), and nothing of the call
  is committed.
- An answer that came before a guardrail beside it tripped is discarded, but it was paid for:
  its requests and tokens are counted (`GuardrailLog.discarded`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio

from network.errors import GuardrailTripped
from network.history.results import ModelCall
from network.run.guardrails import (
    GuardedRun,
    Guardrail,
    GuardrailCheck,
    GuardrailResult,
    LimitReached,
    ToolCallCheck,
    log_of,
)
from network.run.limits import Unrecorded

T = TypeVar("T")


async def run_guardrails(
    ctx: GuardedRun,
    guardrails: Sequence[Guardrail],
    value: Any,
    *,
    agent: str | None,
    call: ToolCallCheck | None = None,
) -> tuple[Guardrail, GuardrailResult] | None:
    """Run `guardrails` on `value` concurrently: the first trip (the others cancelled), or
    None when every one passed. A guardrail's own exception is raised as it is."""
    if len(guardrails) == 1:
        guardrail = guardrails[0]
        result = await _run_one(ctx, guardrail, value, agent, call)
        return (guardrail, result) if result.tripped else None
    tripped: list[tuple[Guardrail, GuardrailResult]] = []
    failed: list[BaseException] = []

    async with anyio.create_task_group() as group:

        async def one(guardrail: Guardrail) -> None:
            try:
                result = await _run_one(ctx, guardrail, value, agent, call)
            except Exception as exc:  # raised after the group, as it is (no ExceptionGroup)
                failed.append(exc)
                group.cancel_scope.cancel()
                return
            if result.tripped and not tripped:
                tripped.append((guardrail, result))
                group.cancel_scope.cancel()

        for guardrail in guardrails:
            group.start_soon(one, guardrail)
    if tripped:
        return tripped[0]
    if failed:
        raise failed[0]
    return None


async def _run_one(
    ctx: GuardedRun, guardrail: Guardrail, value: Any, agent: str | None, call: ToolCallCheck | None
) -> GuardrailResult:
    spent: list[ModelCall] = []
    check = GuardrailCheck(
        guardrail.name,
        guardrail.kind,
        agent,
        time.time(),
        None if call is None else call.tool,
        None if call is None else call.call_id,
    )
    started = time.perf_counter()
    try:
        check.result = await guardrail.check(ctx, value, spent)
        return check.result
    except anyio.get_cancelled_exc_class():
        check.cancelled = True
        raise
    except BaseException as exc:
        check.error = type(exc).__name__
        raise
    finally:
        check.duration_ms = (time.perf_counter() - started) * 1000
        check.model_calls = tuple(spent)
        log_of(ctx).checks.append(check)


def tripped_error(
    ctx: GuardedRun,
    guardrail: Guardrail,
    result: GuardrailResult,
    *,
    agent: str | None,
    tool: str | None = None,
) -> GuardrailTripped:
    """The `GuardrailTripped` of a trip, kept as the run's (`GuardrailLog.tripped`)."""
    where = f"agent {agent!r}" if tool is None else f"tool {tool!r} of agent {agent!r}"
    error = GuardrailTripped(
        f"{guardrail.kind} guardrail {guardrail.name!r} tripped on {where}",
        guardrail=guardrail.name,
        kind=guardrail.kind,
        agent=agent,
        tool=tool,
        info=result.info,
        result=result,
    )
    error.event = ("GuardrailTripped", tripped_event(error))  # sent as the step closes
    log_of(ctx).tripped = error
    return error


def tripped_event(tripped: GuardrailTripped) -> dict[str, Any]:
    """The value of the CUSTOM "GuardrailTripped" event a streamed run sends before the
    tripped step ends: which guardrail, of which kind, on which agent (and tool). Not `info`:
    what a guardrail says is the application's to show or not."""
    value = {"guardrail": tripped.guardrail, "kind": tripped.kind, "agent": tripped.agent}
    if tripped.tool is not None:
        value["tool"] = tripped.tool
    return value


async def check_beside(
    ctx: GuardedRun,
    guardrails: Sequence[Guardrail],
    value: Any,
    agent: str,
    ask: Callable[[], Awaitable[T]],
    discard: Callable[[T], None] | None = None,
) -> T:
    """`await ask()` (an agent's model call) with input guardrails on `value`: the blocking
    ones first, the others concurrently with it. A trip cancels the call (or discards its
    answer when it came first, handing it to `discard` to be counted) and raises
    `GuardrailTripped`: the answer is returned only once every guardrail passed."""
    asking = sum(1 for g in guardrails if g.asks_model)
    budget = ctx.engine.budget
    if asking and budget is not None and budget.check(ctx, Unrecorded(pending=asking)) is not None:
        raise LimitReached  # the call and its checks would not fit: neither is asked
    before = [g for g in guardrails if g.blocking]
    beside = [g for g in guardrails if not g.blocking] if before else guardrails
    if before:
        trip = await run_guardrails(ctx, before, value, agent=agent)
        if trip is not None:
            raise tripped_error(ctx, *trip, agent=agent)
    if not beside:
        return await ask()
    answers: list[T] = []
    failed: list[BaseException] = []
    tripped: list[tuple[Guardrail, GuardrailResult]] = []

    async with anyio.create_task_group() as group:

        async def guard() -> None:
            try:
                trip = await run_guardrails(ctx, beside, value, agent=agent)
            except Exception as exc:
                failed.append(exc)
                group.cancel_scope.cancel()
                return
            if trip is not None:
                tripped.append(trip)
                group.cancel_scope.cancel()  # the model call stops here

        async def answer() -> None:
            try:
                answers.append(await ask())
            except Exception as exc:  # the model failed: the checks have nothing to guard
                failed.append(exc)
                group.cancel_scope.cancel()

        group.start_soon(guard)
        group.start_soon(answer)
    if tripped or failed:
        if answers and discard is not None:
            discard(answers[0])
        if tripped:
            raise tripped_error(ctx, *tripped[0], agent=agent)
        raise failed[0]
    return answers[0]


__all__ = ["check_beside", "run_guardrails", "tripped_error", "tripped_event"]
