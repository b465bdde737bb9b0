"""Guardrails: checks around an agent call (its input, its answer) and a tool call (its
arguments, its result) whose tripwire stops the run. This module holds what they are and
what a run records of them; `network.run.guardrail_checks` runs them.

A guardrail is a `Guardrail`: a name, the kind of value it checks, and a function
`check(ctx, value)` (sync or async) returning a `GuardrailResult`. `network.capabilities.guardrails`
makes
them from functions (`@input_guardrail`, ...) and from agents with typed output.

What a run keeps of them (`RunContext.engine.guardrails`, a `GuardrailLog` made by the first check):
one `GuardrailCheck` per guardrail run, with the model requests it made, which usage limits
count (`network.run.limits`) and traces draw as `apply_guardrail` spans
(`network.telemetry.guardrail_spans`); the requests of answers a trip discarded; the trip that
stopped the run; the agents whose input was checked.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio.to_thread

from network.errors import ConfigurationError, GuardrailTripped, RunStopped
from network.history.results import ModelCall
from network.run.limits import Budget, Spending, SpendingBooks

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
        if not isinstance(message, str):  # None would make it a trip: the run would stop
            raise ConfigurationError(
                f"GuardrailResult.reject: message must be a string, got {type(message).__name__}"
            )
        return cls(True, info, message)

    @property
    def rejects(self) -> bool:
        """A trip that rejects a tool call (rather than stopping the run)."""
        return self.tripped and self.message is not None


class Guardrail:
    """A named check of one kind of value.

    A sync `fn` runs in a worker thread, as a blocking tool does, so a slow check (a
    classifier, a regex over a long text) never stalls the event loop and with it every other
    run and stream of the process. A check that finds the run cancelled (another guardrail
    tripped) is abandoned: its thread finishes on its own and its verdict is dropped. Write a
    guardrail that touches objects of the event loop (a client bound to it) as `async def`.

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

    __slots__ = ("blocking", "fn", "is_async", "kind", "name")

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
        _check_arguments(label, fn)
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
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004 - a callable object's async __call__
        )

    async def check(self, ctx: GuardedRun, value: Any, spent: list[ModelCall]) -> GuardrailResult:
        """Run the check on `value`. A check that asks a model appends each request's record
        to `spent` and counts its usage in the run (`ctx.add_usage`). A sync check runs in a
        worker thread (see the class docstring)."""
        if self.is_async:
            verdict = self.fn(ctx, value)
        else:
            verdict = await anyio.to_thread.run_sync(self.fn, ctx, value, abandon_on_cancel=True)
        if inspect.isawaitable(verdict):  # a sync function that returned a coroutine
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


def _check_arguments(label: str, fn: Callable[..., Any]) -> None:
    """A check is called `fn(ctx, value)`: one that cannot take them is refused when it is
    given, not a TypeError naming a lambda in the middle of a run (beside a model request
    already paid for)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or extension without one: called as it is
        return
    try:
        signature.bind(None, None)
    except TypeError as error:
        raise ConfigurationError(
            f"guardrail {label!r}: a guardrail is called as fn(ctx, value), and {fn!r} cannot "
            f"take those two arguments ({error})"
        ) from error


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
        arguments: the arguments as the tool receives them: the model's, validated and
            coerced by the tool's schema (`{"amount": 800}` when the model sent `"800"`). A
            call whose arguments do not validate fails as the tool's own error, unchecked.
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
    """A run's guardrail checks, in the order they ended, and the last trip (what traces
    read; the run's result takes its trip from the stop that carries it, `Stop.cause`)."""

    checks: list[GuardrailCheck] = field(default_factory=list)
    inputs_checked: set[str] = field(default_factory=set)  # agents whose input was checked
    tripped: GuardrailTripped | None = None
    in_flight: int = 0  # guardrails' model requests under way (not recorded yet)
    # The requests of answers a trip discarded (they came before the guardrail beside them
    # tripped): spent all the same, so usage, limits and traces count them.
    discarded: list[ModelCall] = field(default_factory=list)


class GuardedBooks(SpendingBooks, Protocol):
    """What running a guardrail needs of a run's bookkeeping (`RunContext.engine`): its
    guardrail log and its budget."""

    guardrails: GuardrailLog | None
    budget: Budget | None


class GuardedRun(Spending, Protocol):
    """What running a guardrail needs of a run (`RunContext` is one): its guardrail log, and
    what its budget counts."""

    @property
    def engine(self) -> GuardedBooks: ...


class LimitReached(RunStopped):
    """Internal: a guardrail's model request would pass the run's usage limits. The loop
    stops the run with `StopReason.USAGE_LIMIT` (`Budget.exceeded` says which limit)."""

    stop_reason = "usage_limit"


def log_of(ctx: GuardedRun) -> GuardrailLog:
    """The run's `GuardrailLog`, made on first use."""
    books = ctx.engine
    log: GuardrailLog | None = books.guardrails
    if log is None:
        log = books.guardrails = GuardrailLog()
    return log


__all__ = [
    "KINDS",
    "GuardedBooks",
    "GuardedRun",
    "Guardrail",
    "GuardrailCheck",
    "GuardrailLog",
    "GuardrailResult",
    "LimitReached",
    "ToolCallCheck",
    "coerce_guardrails",
    "log_of",
]
