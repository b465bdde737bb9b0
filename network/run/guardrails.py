"""Guardrails: checks around an agent call (its input, its answer) and a tool call (its
arguments, its result) whose tripwire stops the run.

A guardrail is a `Guardrail`: a name, the kind of value it checks, and a function
`check(ctx, value)` (sync or async) returning a `GuardrailResult`. `agents.guardrails` makes
them from functions (`@input_guardrail`, ...) and from agents with typed output; this module
runs them, records them and turns a trip into a `GuardrailTripped`.

What a run keeps of them (`RunContext.guardrails`, a `GuardrailLog` made by the first check):
one `GuardrailCheck` per guardrail run, with the model requests it made, which usage limits
count (`network.run.limits`) and traces draw as `apply_guardrail` spans
(`network.telemetry.spans`); the trip that stopped the run; the agents whose input was checked.

Decisions where the issue is silent:
- Several guardrails on one value run concurrently; the first trip cancels the others (a
  cancelled check is recorded, with no result), so which one is reported when two would trip
  depends on timing, as with the OpenAI Agents SDK's.
- A guardrail that raises fails the run with its own exception: a check that could not run
  never lets a call through silently.
- A guardrail's model requests need room under `max_model_calls` beside the requests of the
  call it checks that are not recorded yet (`in_flight`): when there is none, the run stops
  with `StopReason.USAGE_LIMIT` before the request (`LimitReached`), and nothing of the call
  is committed.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import anyio

from network.errors import ConfigurationError, GuardrailTripped
from network.history.results import ModelCall
from network.run.limits import Budget

T = TypeVar("T")

KINDS = ("input", "output", "tool_input", "tool_output")


@dataclass(frozen=True, slots=True)
class GuardrailResult:
    """What a guardrail says about a value: whether its tripwire fired, and why.

    Attributes:
        tripped: the tripwire fired.
        info: anything the guardrail wants to report (its reasoning, a classifier's typed
            output); it reaches `GuardrailTripped.info`, traces and logs.
        message: tool guardrails only: a tripped check with a message rejects the call (the
            model reads the message as the call's result and the run goes on); without one a
            trip stops the run. Input and output guardrails always stop the run.
    """

    tripped: bool = False
    info: Any = None
    message: str | None = None

    def __post_init__(self) -> None:
        if type(self.tripped) is not bool:
            raise ConfigurationError(
                f"GuardrailResult.tripped must be True or False, got {self.tripped!r}"
            )
        if self.message is not None and not isinstance(self.message, str):
            raise ConfigurationError(
                f"GuardrailResult.message must be a string, got {type(self.message).__name__}"
            )

    @classmethod
    def allow(cls, info: Any = None) -> GuardrailResult:
        """The value passes."""
        return cls(False, info)

    @classmethod
    def trip(cls, info: Any = None) -> GuardrailResult:
        """The tripwire fired: the run stops."""
        return cls(True, info)

    @classmethod
    def reject(cls, message: str, info: Any = None) -> GuardrailResult:
        """A tool guardrail refuses the call: the model reads `message`, the run goes on."""
        return cls(True, info, message)

    @property
    def rejects(self) -> bool:
        """A trip that rejects a tool call (rather than stopping the run)."""
        return self.tripped and self.message is not None


class Guardrail:
    """A named check of one kind of value.

    Args:
        fn: `fn(ctx, value)`, sync or async, returning a `GuardrailResult`. `ctx` is the
            run's `RunContext` (`ctx.agent` is the agent whose call is checked); `value` is
            the run's input text ("input"), the final answer ("output": the typed value of an
            agent with `output_type`, else its text) or a `ToolCallCheck` (tool kinds).
        kind: "input", "output", "tool_input" or "tool_output".
        name: how traces, logs and `GuardrailTripped` name it (default: the function's name).
        blocking: input guardrails only: run before the agent's model call instead of beside
            it, so that nothing is asked (nor streamed) before the check passes.
    """

    __slots__ = ("blocking", "fn", "kind", "name")

    # Whether a check asks a model (an agent's does): a call with such checks beside it needs
    # room for their requests under `max_model_calls` before anything is asked.
    asks_model = False

    def __init__(
        self,
        fn: Callable[[Any, Any], Any],
        *,
        kind: str,
        name: str | None = None,
        blocking: bool = False,
    ) -> None:
        if kind not in KINDS:
            raise ConfigurationError(f"guardrail kind must be one of {KINDS}, got {kind!r}")
        label = name or getattr(fn, "__name__", None)
        if not isinstance(label, str) or not label:
            raise ConfigurationError(f"guardrail {fn!r} needs a name: pass name=...")
        if not callable(fn):
            raise ConfigurationError(f"guardrail {label!r}: {fn!r} is not callable")
        if type(blocking) is not bool:
            raise ConfigurationError(f"guardrail {label!r}: blocking must be True or False")
        if blocking and kind != "input":
            raise ConfigurationError(
                f"guardrail {label!r}: blocking= is for input guardrails (a {kind} guardrail "
                "always runs before what it guards goes on)"
            )
        self.fn = fn
        self.kind = kind
        self.name = label
        self.blocking = blocking

    async def check(self, ctx: GuardedRun, value: Any, spent: list[ModelCall]) -> GuardrailResult:
        """Run the check on `value`. A check that asks a model appends each request's record
        to `spent` and counts its usage in the run (`ctx.add_usage`)."""
        verdict = self.fn(ctx, value)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return self.verdict(verdict)

    def verdict(self, returned: Any) -> GuardrailResult:
        """The `GuardrailResult` a check returned, or a `ConfigurationError` naming it."""
        if isinstance(returned, GuardrailResult):
            return returned
        raise ConfigurationError(
            f"guardrail {self.name!r} returned {type(returned).__name__}, not a GuardrailResult "
            "(return GuardrailResult.allow() / .trip(info) / .reject(message))"
        )

    def __repr__(self) -> str:
        return f"Guardrail({self.name!r}, kind={self.kind!r})"


def coerce_guardrails(owner: str, kind: str, items: Any) -> tuple[Guardrail, ...]:
    """The guardrails given as `{kind}_guardrails=`: `Guardrail`s of that kind, functions
    (wrapped), or objects that make one (`item.as_guardrail(kind)`: an `Agent`)."""
    if items is None:
        return ()
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise ConfigurationError(f"{owner}: {kind}_guardrails must be a list, got {items!r}")
    made: list[Guardrail] = []
    for item in items:
        guardrail: Any = item
        if not isinstance(item, Guardrail):
            make = getattr(item, "as_guardrail", None)
            if callable(make):
                guardrail = make(kind)
            elif callable(item):
                guardrail = Guardrail(item, kind=kind)
            else:
                raise ConfigurationError(
                    f"{owner}: {item!r} in {kind}_guardrails is not a guardrail (a function, "
                    "an agent with output_type, or a Guardrail)"
                )
        if not isinstance(guardrail, Guardrail) or guardrail.kind != kind:
            raise ConfigurationError(
                f"{owner}: {guardrail!r} in {kind}_guardrails is a "
                f"{getattr(guardrail, 'kind', '?')} guardrail"
            )
        if any(other.name == guardrail.name for other in made):
            raise ConfigurationError(f"{owner}: two {kind} guardrails are named {guardrail.name!r}")
        made.append(guardrail)
    return tuple(made)


@dataclass(frozen=True, slots=True)
class ToolCallCheck:
    """What a tool guardrail checks: the call, and for a "tool_output" guardrail its result.

    Attributes:
        tool: the tool's name.
        arguments: the arguments as the model sent them (a dict; the raw text when the model
            sent invalid JSON).
        call_id: the tool call's id.
        agent: the agent whose call it is.
        result: the tool's result (None for "tool_input").
        content: the result as the model would read it (None for "tool_input").
    """

    tool: str
    arguments: Any
    call_id: str
    agent: str
    result: Any = None
    content: str | None = None


@dataclass(slots=True)
class GuardrailCheck:
    """One guardrail run: what traces and usage limits read.

    `result` is None when the check failed (`error`) or was cancelled (`cancelled`: another
    guardrail tripped first, the call it guarded failed, or the run was cancelled).
    """

    guardrail: str
    kind: str
    agent: str | None
    started_at: float  # epoch seconds
    tool: str | None = None
    tool_call_id: str | None = None
    duration_ms: float = 0.0
    result: GuardrailResult | None = None
    error: str | None = None
    cancelled: bool = False
    model_calls: tuple[ModelCall, ...] = ()


@dataclass(slots=True, eq=False)
class GuardrailLog:
    """A run's guardrail checks, in the order they ended, and the trip that stopped it."""

    checks: list[GuardrailCheck] = field(default_factory=list)
    inputs_checked: set[str] = field(default_factory=set)  # agents whose input was checked
    tripped: GuardrailTripped | None = None
    in_flight: int = 0  # guardrails' model requests under way (not recorded yet)
    # The requests of answers a trip discarded (they came before the guardrail beside them
    # tripped): spent all the same, so usage, limits and traces count them.
    discarded: list[ModelCall] = field(default_factory=list)


class GuardedRun(Protocol):
    """What running a guardrail needs of a run (`RunContext` is one): its guardrail log."""

    guardrails: GuardrailLog | None
    budget: Budget | None


class LimitReached(Exception):
    """Internal: a guardrail's model request would pass the run's usage limits. The loop
    stops the run with `StopReason.USAGE_LIMIT` (`Budget.exceeded` says which limit)."""


def log_of(ctx: GuardedRun) -> GuardrailLog:
    """The run's `GuardrailLog`, made on first use."""
    log: GuardrailLog | None = ctx.guardrails
    if log is None:
        log = ctx.guardrails = GuardrailLog()
    return log


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
    budget = ctx.budget
    if asking and budget is not None and budget.check(ctx, asking) is not None:
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


__all__ = [
    "Guardrail",
    "GuardrailCheck",
    "GuardrailLog",
    "GuardrailResult",
    "LimitReached",
    "ToolCallCheck",
    "check_beside",
    "coerce_guardrails",
    "run_guardrails",
]
