"""Usage limits: caps on what one run may spend, checked before each model request.

    result = await network.run(task, limits=UsageLimits(max_model_calls=20, max_cost_usd=0.5))
    if result.stop_reason == "usage_limit":
        print(result.limit_exceeded)  # which limit, its value and the figure that reached it

The run loop checks before each agent call (one agent call is one model request), a routing
agent before each of its own requests, and a guardrail that asks a model before its request
(counting the request of the call it checks, which is not recorded yet), from what the run
reported so far: agent calls, router and guardrail requests made, tool calls run, prompt and
completion tokens, and cost. A run that reached a limit stops like a router's `Stop`: with
`StopReason.USAGE_LIMIT`, its state and every completed call kept (and committed to its
thread), and `RunResult.limit_exceeded`.

Decisions where the issue is silent:
- a limit is reached when the figure is at or above it: `max_model_calls=3` allows three
  requests, `max_input_tokens=1000` allows requests while fewer than 1000 were spent;
- tool calls are counted when they ran, and a single model answer may ask for several: the
  check before the next request stops the run, so `max_tool_calls` can be passed by the
  calls of one answer (they are not cut mid-answer, which would leave calls unanswered);
- cost is what each request's model priced itself at (`OpenAIModel` and `LiteLLMModel`: the
  `price=` they were given, else litellm's offline price map); a request whose model has no
  known price counts as 0 and `UsageFigures.unpriced` counts it;
- a run capped by `max_cost_usd` that gets an answer from such a model warns, once per model
  per run, naming it: an `UnpricedModelWarning` (Python's `warnings`: shown by default, once
  per model per process) and a structlog warning `usage_limits.unpriced_model`. It does not
  refuse the run at start: which models a run will ask is not known then (a router picks
  the agents, a routing agent or a context policy brings its own model, a custom `Model`
  tells its price only by answering), so a start check would pass runs it cannot vouch for;
  and a local server or a `ScriptedModel` costs nothing yet has no price, which would make a
  cost cap unusable in a development setup sharing its limits with production. Whoever
  wants such a run stopped turns the warning into an error
  (`warnings.simplefilter("error", UnpricedModelWarning)`): the run then ends with that
  error before its next request (or as it ends, its last answer being counted then, never
  on a later read of `RunResult.spent`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from network.errors import UnpricedModelWarning
from network.history.results import MAX_TOKEN_COUNT, ModelCall, Usage
from network.logger import get_logger
from network.numbers import check_number
from network.state.state import State
from network.warned import warn

_FIGURE_OF = {
    "max_model_calls": "model_calls",
    "max_tool_calls": "tool_calls",
    "max_input_tokens": "input_tokens",
    "max_output_tokens": "output_tokens",
    "max_cost_usd": "cost_usd",
}


@dataclass(slots=True, frozen=True, kw_only=True)
class UsageLimits:
    """Caps on one run. Every field is optional; None means no cap.

    A negative, NaN, infinite or non-numeric cap is a `ConfigurationError` naming the field.
    """

    max_model_calls: int | None = None
    max_tool_calls: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_cost_usd: float | None = None

    def __post_init__(self) -> None:
        for name in _FIGURE_OF:
            check_number(
                f"UsageLimits.{name}",
                getattr(self, name),
                integer=name != "max_cost_usd",
                optional=True,
            )


def priced(cost: object) -> float | None:
    """A request's reported cost as the limits count it: None (unpriced) unless it is a
    finite number >= 0 (a custom `Model` may report NaN, infinity or a negative cost)."""
    if type(cost) is float and 0.0 <= cost <= _LARGEST_FLOAT:  # the common case: one test
        return cost
    if cost is None or isinstance(cost, bool) or not isinstance(cost, int | float):
        return None
    return float(cost) if 0 <= cost <= _LARGEST_FLOAT else None


def token_count(count: object) -> int:
    """A reported token count as the limits count it: a whole number within 0 to
    `MAX_TOKEN_COUNT` as it is, a larger one as that, anything else as 0 (module docstring)."""
    if type(count) is int and 0 <= count <= MAX_TOKEN_COUNT:  # the common case
        return count
    if isinstance(count, bool) or not isinstance(count, int):
        return 0
    return MAX_TOKEN_COUNT if count > MAX_TOKEN_COUNT else 0


_LARGEST_FLOAT = 1.7976931348623157e308  # sys.float_info.max: past it is infinity


@dataclass(slots=True)
class UsageFigures:
    """What a run spent so far, as the limits count it: its model requests (`model_calls`,
    pydantic-ai's `requests`), tool calls, tokens and cost, with its routing agent's, its
    guardrails' and its sub-runs' (agents and networks as tools, runs started inside it).

    `RunResult.spent` is one run's. Pass one to `network.run(..., usage=figures)` to carry
    usage and limits across runs: each run adds what it spends to it, and checks its limits
    against the total (see docs/telemetry.md).
    """

    model_calls: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced: int = 0  # model requests whose price is unknown (counted as 0 in cost_usd)

    def add_call(self, call: ModelCall) -> None:
        """Count one model request (a figure that is none counted as the module says)."""
        self.model_calls += 1
        self.input_tokens += token_count(call.usage.prompt_tokens)
        self.output_tokens += token_count(call.usage.completion_tokens)
        cost = priced(call.cost_usd)
        if cost is None:
            self.unpriced += 1
        else:
            self.cost_usd += cost

    def add_unrecorded(self, usage: Usage, requests: int = 1) -> None:
        """Count the `requests` of an agent call that recorded none (a run that records no
        requests, a custom agent): their tokens (`usage`, the call's), their cost unknown."""
        self.model_calls += requests
        self.input_tokens += token_count(usage.prompt_tokens)
        self.output_tokens += token_count(usage.completion_tokens)
        self.unpriced += requests

    def add(self, other: UsageFigures) -> None:
        """Add every count of `other` to these."""
        self.model_calls += other.model_calls
        self.tool_calls += other.tool_calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd += other.cost_usd
        self.unpriced += other.unpriced

    def copy(self) -> UsageFigures:
        """These counts, as a new object."""
        return UsageFigures(
            self.model_calls,
            self.tool_calls,
            self.input_tokens,
            self.output_tokens,
            self.cost_usd,
            self.unpriced,
        )


@dataclass(slots=True, frozen=True)
class LimitExceeded:
    """Which limit stopped a run: its name (`"max_cost_usd"`), its value, and the figure."""

    limit: str
    value: float
    actual: float
    figures: UsageFigures
    branches: int = 0  # a fan-out of this many branches would have passed the limit

    def __str__(self) -> str:
        if self.branches:
            return (
                f"usage limit {self.limit}={self.value:g} would be passed by a fan-out of "
                f"{self.branches} branches ({self.actual:g} used)"
            )
        return f"usage limit {self.limit}={self.value:g} reached ({self.actual:g} used)"


class _CheckSpent(Protocol):
    """A guardrail check as a budget reads it (`network.run.guardrails.GuardrailCheck`)."""

    @property
    def model_calls(self) -> Sequence[ModelCall]: ...


class _GuardrailsSpent(Protocol):
    """A run's guardrail log as a budget reads it (`network.run.guardrails.GuardrailLog`,
    which imports `Budget` from here, so it is named by its shape)."""

    @property
    def checks(self) -> Sequence[_CheckSpent]: ...
    @property
    def discarded(self) -> Sequence[ModelCall]: ...


class SpendingBooks(Protocol):
    """What a budget reads of a run's bookkeeping (`RunContext.engine`, a `RunBookkeeping`)."""

    @property
    def router_calls(self) -> Sequence[ModelCall]: ...
    @property
    def guardrails(self) -> _GuardrailsSpent | None: ...
    @property
    def subagent_calls(self) -> Sequence[ModelCall]: ...
    @property
    def subagent_tool_calls(self) -> int: ...


class Spending(Protocol):
    """What a budget reads of a run: a `RunContext` (which imports `Budget` from here, so a
    budget names it by the fields it counts)."""

    @property
    def state(self) -> State: ...
    @property
    def call_count(self) -> int: ...
    @property
    def engine(self) -> SpendingBooks: ...


@dataclass(frozen=True, slots=True)
class Unrecorded:
    """What a budget check counts beyond what the run recorded so far, in that check only.

    `in_flight`: requests spent but not yet recorded (the agent call whose tool runs a
    sub-run, `network.run.subrun`; a fan-out's branches, `network.run.branch_run`): the run
    counts them when their call is recorded. `pending`: model requests about to be made or
    under way, with no figures yet (a guardrail's request beside the agent call it checks):
    they count in `max_model_calls`. `tools`: tool calls started and not yet recorded (the
    delegations a sub-run runs inside, at every level above it), counted in `max_tool_calls`.
    """

    in_flight: Sequence[ModelCall] = ()
    pending: int = 0
    tools: int = 0

    def __add__(self, other: Unrecorded) -> Unrecorded:
        """Both: `self`'s requests first, then `other`'s."""
        return Unrecorded(
            (*self.in_flight, *other.in_flight),
            self.pending + other.pending,
            self.tools + other.tools,
        )


NOTHING_UNRECORDED = Unrecorded()  # a check of what the run recorded, nothing more


@dataclass(slots=True)
class Budget:
    """A run's limits and what it spent so far; `check` before each model request.

    `carried`: usage carried across runs (`network.run(..., usage=figures)`): what earlier
    runs spent, which this run's spending joins as it is counted; the limits are checked
    against it (the session's total) instead of this run's `figures` alone.
    """

    limits: UsageLimits
    figures: UsageFigures = field(default_factory=UsageFigures)
    exceeded: LimitExceeded | None = None
    carried: UsageFigures | None = None
    _results_seen: int = 0
    _router_calls_seen: int = 0
    _guardrail_checks_seen: int = 0
    _discarded_seen: int = 0
    _subagent_calls_seen: int = 0  # sub-runs' requests (RunContext.engine.subagent_calls) counted
    _subagent_tools_seen: int = 0
    _unpriced_warned: set[str] = field(default_factory=set)  # models already warned about

    def check(
        self, ctx: Spending, unrecorded: Unrecorded = NOTHING_UNRECORDED
    ) -> LimitExceeded | None:
        """Count what `ctx` reported since the last check; the limit reached, if any, with
        `unrecorded` counted too (in this check only)."""
        self.count(ctx)
        figures = self.counted
        in_flight, pending, tools = unrecorded.in_flight, unrecorded.pending, unrecorded.tools
        if in_flight or tools:
            figures = figures.copy()
            figures.tool_calls += tools
            for call in in_flight:
                figures.add_call(call)
        limits = self.limits
        for name, figure in _FIGURE_OF.items():
            cap = getattr(limits, name)
            if cap is None:
                continue
            actual = getattr(figures, figure)
            if pending and figure == "model_calls":
                actual += pending
            if actual >= cap:
                self.exceeded = LimitExceeded(name, cap, actual, figures.copy())
                return self.exceeded
        return None

    @property
    def counted(self) -> UsageFigures:
        """What the limits are checked against: the carried usage, else this run's."""
        return self.carried if self.carried is not None else self.figures

    def check_fan_out(self, branches: int) -> LimitExceeded | None:
        """Whether a fan-out of `branches` fits in `max_model_calls` (call after `check`).

        Each branch is an agent call, so at least one model request: as `max_iter` does, a
        fan-out that cannot run whole is not started (its branches run concurrently, so the
        check before each request cannot stop one of them midway)."""
        cap = self.limits.max_model_calls
        counted = self.counted
        used = counted.model_calls
        if cap is not None and used + branches > cap:
            self.exceeded = LimitExceeded("max_model_calls", cap, used, counted.copy(), branches)
            return self.exceeded
        return None

    def spent(self, ctx: Spending) -> UsageFigures:
        """What the run `ctx` spent, all of it counted now (a copy: `RunResult.spent`)."""
        self.count(ctx)
        return self.figures.copy()

    def count(self, ctx: Spending) -> None:
        """Count what `ctx` reported since the last count, into `figures` (and `carried`)."""
        carried = self.carried
        if carried is None:
            self._count(ctx, self.figures)
            return
        new = UsageFigures()
        self._count(ctx, new)
        self.figures.add(new)
        carried.add(new)

    def _count(self, ctx: Spending, figures: UsageFigures) -> None:
        results = ctx.state.results
        first = max(len(results) - ctx.call_count, self._results_seen)  # this run's calls only
        for result in results[first:]:
            figures.tool_calls += len(result.tool_calls)
            calls = result.model_calls
            if not calls:
                if result.output:  # it answered, and no request was recorded: one request
                    # per answer (a typed answer's re-asks keep every answer in `answers`;
                    # one answer a capability changed keeps the one as given)
                    figures.add_unrecorded(result.usage, len(result.answers) or 1)
                continue
            for call in calls:
                figures.add_call(call)
                if priced(call.cost_usd) is None:
                    self._unpriced(call)
        self._results_seen = len(results)
        books = ctx.engine
        router_calls = books.router_calls
        for call in router_calls[self._router_calls_seen :]:
            figures.add_call(call)
            if priced(call.cost_usd) is None:
                self._unpriced(call)
        self._router_calls_seen = len(router_calls)
        guardrails = books.guardrails  # guardrails' model requests (network.run.guardrails)
        if guardrails is not None:
            for check in guardrails.checks[self._guardrail_checks_seen :]:
                for call in check.model_calls:
                    figures.add_call(call)
                    if priced(call.cost_usd) is None:
                        self._unpriced(call)
            self._guardrail_checks_seen = len(guardrails.checks)
            for call in guardrails.discarded[self._discarded_seen :]:
                figures.add_call(call)
            self._discarded_seen = len(guardrails.discarded)
        subagent_calls = books.subagent_calls  # what its sub-runs spent (network.run.subrun)
        for call in subagent_calls[self._subagent_calls_seen :]:
            figures.add_call(call)
            if priced(call.cost_usd) is None:
                self._unpriced(call)
        self._subagent_calls_seen = len(subagent_calls)
        figures.tool_calls += books.subagent_tool_calls - self._subagent_tools_seen
        self._subagent_tools_seen = books.subagent_tool_calls

    def _unpriced(self, call: ModelCall) -> None:
        """Warn, once per model, that the cost cap cannot count an answer (module docstring)."""
        cap = self.limits.max_cost_usd
        if cap is None or call.error is not None or call.model in self._unpriced_warned:
            return  # no cost cap, or a failed attempt (no answer to price)
        self._unpriced_warned.add(call.model)
        get_logger().warning(
            "usage_limits.unpriced_model",
            model=call.model,
            agent=call.agent,
            max_cost_usd=cap,
            note="the model has no known price: max_cost_usd does not count its requests",
        )
        warn(
            f"model {call.model!r} has no known price: UsageLimits(max_cost_usd={cap:g}) does "
            "not count its requests; give it one with price=Price(...)",
            UnpricedModelWarning,
        )


__all__ = [
    "NOTHING_UNRECORDED",
    "Budget",
    "LimitExceeded",
    "Spending",
    "SpendingBooks",
    "Unrecorded",
    "UsageFigures",
    "UsageLimits",
]
