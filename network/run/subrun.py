"""Sub-runs: a run started by a tool of another run (an agent or a network used as a tool).

`agents.as_tool` runs its agent or network as a run of its own, on its own state, from inside
the parent run's tool call. What ties the two together lives here:

- spending: the sub-run's budget is a `ChildBudget`. Every model request and tool call it
  makes is reported to the parent run as it happens (`RunContext.engine.subagent_calls` and
  `subagent_tool_calls`), so the parent's usage limits count them, and before each of its own
  requests the sub-run checks the parent's limits (with the requests of the parent's agent
  call under way, spent but not yet recorded, and the tool calls running at every level above
  it, its own delegation among them): a sub-run cannot spend past what its parent may.
  A run started inside another run without `as_tool` (`await other.run(...)` in a tool) is
  adopted the same way (`network.run.budgets.caller`).
  Its own network's `limits` (or the `limits=` it was given) apply too. A sub-run stopped by
  the parent's limit stops with `StopReason.USAGE_LIMIT`, and so does the parent at its next
  check;
- token totals: the sub-run's tokens are added to the parent's (`RunResult.usage`) when it
  reports them;
- the caller: found from the sub-run (`caller_of`), for what observes both runs to tie them
  together (telemetry nests the sub-run's trace in its caller's); the kernel keeps nothing
  of theirs.

Decisions where the issue is silent: spending is reported to the parent before each check and
once more when the sub-run ends (however it ends), so a cancelled or failed sub-run's requests
are counted too.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from network.errors import ConfigurationError
from network.history.results import ModelCall, Usage
from network.ids import new_id
from network.mappings import mapping_entries
from network.run.context import RunContext
from network.run.limits import (
    NOTHING_UNRECORDED,
    Budget,
    LimitExceeded,
    Spending,
    Unrecorded,
    UsageFigures,
    UsageLimits,
)
from network.run.max_iter import check_max_iter
from network.run.temp_sources import link_subrun, unlink_subrun
from network.state.schema import mapped_key_problem


class ChildBudget:
    """The usage limits of a sub-run: its own (optional) and its parent run's."""

    __slots__ = (
        "_results_seen",
        "_router_calls_seen",
        "_subagent_calls_seen",
        "_subagent_tools_seen",
        "exceeded",
        "own",
        "parent",
        "run",
    )

    def __init__(
        self, parent: RunContext, own: UsageLimits | None, usage: UsageFigures | None = None
    ) -> None:
        self.parent = parent
        self.own = (
            Budget(own or UsageLimits(), carried=usage)
            if own is not None or usage is not None
            else None
        )
        self.exceeded: LimitExceeded | None = None
        self.run: RunContext | None = None  # the sub-run (`adopt`)
        self._results_seen = 0
        self._router_calls_seen = 0
        self._subagent_calls_seen = 0
        self._subagent_tools_seen = 0

    @property
    def limits(self) -> UsageLimits | None:
        """The sub-run's own limits (the parent's are its parent's business)."""
        return self.own.limits if self.own is not None else None

    def report(self, ctx: RunContext) -> None:
        """Tell the parent what `ctx` (the sub-run) spent since the last report."""
        calls: list[ModelCall] = []
        tools = 0
        results = ctx.state.results
        first = max(len(results) - ctx.call_count, self._results_seen)
        for result in results[first:]:
            calls.extend(result.model_calls)
            tools += len(result.tool_calls)
        self._results_seen = len(results)
        calls.extend(ctx.engine.router_calls[self._router_calls_seen :])
        self._router_calls_seen = len(ctx.engine.router_calls)
        calls.extend(ctx.engine.subagent_calls[self._subagent_calls_seen :])
        self._subagent_calls_seen = len(ctx.engine.subagent_calls)
        tools += ctx.engine.subagent_tool_calls - self._subagent_tools_seen
        self._subagent_tools_seen = ctx.engine.subagent_tool_calls
        parent = self.parent
        if calls:
            parent.engine.subagent_calls = (*parent.engine.subagent_calls, *calls)
            spent = Usage()
            for call in calls:
                spent = spent + call.usage
            parent.add_usage(spent)
        if tools:
            parent.engine.subagent_tool_calls += tools

    def check(
        self, ctx: RunContext, unrecorded: Unrecorded = NOTHING_UNRECORDED
    ) -> LimitExceeded | None:
        """Report to the parent, then check the sub-run's own limits and the parent's (with
        `unrecorded`: requests and tool calls not yet recorded, see `Unrecorded`). The
        parent's own are added on the way up: while its tools run, the requests of its call
        under way and the tool calls running (this sub-run's among them: a delegation in
        flight counts as the tool call it is)."""
        self.report(ctx)
        own = self.own
        exceeded = own.check(ctx, unrecorded) if own is not None else None
        parent = self.parent
        budget: Any = parent.engine.budget
        if exceeded is None and budget is not None:
            running = parent.engine.tools_in_flight
            if running:
                unrecorded += Unrecorded(parent.engine.calls_in_flight, tools=running)
            beside = sum(sub.settle() for sub in parent.engine.subruns if sub is not self)
            if beside:
                unrecorded += Unrecorded(pending=beside)
            exceeded = budget.check(parent, unrecorded)
        if exceeded is not None:
            self.exceeded = exceeded
        return exceeded

    def settle(self) -> int:
        """Report what the sub-run recorded so far (its own sub-runs' first); return the
        requests it has under way, sent and not recorded until their call ends: one for its
        agent call under way, and those of its own sub-runs. A sibling's check (another
        delegation of the same answer, another branch of a fan-out) counts them, so that
        delegations side by side never spend past the caller's limits together."""
        run = self.run
        if run is None:
            return 0
        under_way: int = sum(sub.settle() for sub in run.engine.subruns)
        self.report(run)
        return under_way + (run.agent is not None)

    def spent(self, ctx: Spending) -> UsageFigures:
        """What the sub-run `ctx` spent (`RunResult.spent`)."""
        own = self.own
        return (own if own is not None else Budget(UsageLimits())).spent(ctx)

    def check_fan_out(self, branches: int) -> LimitExceeded | None:
        """Whether a fan-out of `branches` fits in the sub-run's and the parent's limits."""
        exceeded = self.own.check_fan_out(branches) if self.own is not None else None
        budget: Any = self.parent.engine.budget
        if exceeded is None and budget is not None:
            exceeded = budget.check_fan_out(branches)
        if exceeded is not None:
            self.exceeded = exceeded
        return exceeded


SUBRUN_ID_PREFIX = "run_"  # a sub-run's subagentRunId is its run id


def new_subrun_id() -> str:
    """The run id of a new sub-run, which is also its AG-UI `subagentRunId`."""
    return new_id(SUBRUN_ID_PREFIX)


def subrun_id_for(parent: RunContext, tool_call_id: str) -> str:
    """The run id of the sub-run that `parent`'s tool call `tool_call_id` starts.

    In a durable run (or a sub-run of one) a sub-run is one recorded tool step: a process
    killed inside it runs it again whole on resume. Its id is then made from the caller's
    run id and the call's id, both the same on every execution (the call's id comes from the
    recorded model answer), so a tool inside the sub-run can key a side effect on
    `ctx.run.run_id` and find it done. Elsewhere it is a new id."""
    if not _under_durable(parent):
        return new_subrun_id()
    digest = hashlib.sha256(f"{parent.run_id}\x00{tool_call_id}".encode()).hexdigest()
    return SUBRUN_ID_PREFIX + digest[:16]


def _under_durable(ctx: RunContext) -> bool:
    """Whether `ctx` runs durably, or is a sub-run (at any depth) of a run that does."""
    current: RunContext | None = ctx
    while current is not None:
        if current.engine.steps is not None:
            return True
        budget = current.engine.budget
        current = budget.parent if isinstance(budget, ChildBudget) else None
    return False


def is_subrun_id(value: object) -> bool:
    """Whether a `subagentRunId` names a sub-run (an agent or a network used as a tool), whose
    messages are its own, not the caller's conversation; a handoff's target is streamed as a
    sub-agent too (`network.agui.handoffs`), under ids of another kind, and its messages are
    the run's."""
    return isinstance(value, str) and value.startswith(SUBRUN_ID_PREFIX)


def adopt(
    ctx: RunContext,
    parent: RunContext,
    limits: UsageLimits | None,
    usage: UsageFigures | None = None,
) -> None:
    """Make `ctx` a sub-run of `parent`: its budget (with its own `limits` and carried
    `usage`, if any), its caller (`caller_of`)."""
    budget = ChildBudget(parent, limits, usage)
    budget.run = ctx
    ctx.engine.budget = budget  # type: ignore[assignment]
    parent.engine.subruns = (*parent.engine.subruns, budget)  # until it ends (report_spending)
    ctx.engine.budget_accounts = (
        parent.engine.budget_accounts
    )  # its requests reserve on the caller's budgets
    ctx.engine.record_model_calls = True  # what it spends is reported, request by request
    link_subrun(ctx, parent)  # each one's temp: values masked in the other's failure


def caller_of(ctx: RunContext) -> RunContext | None:
    """The run `ctx` is a sub-run of (`adopt`: the context of the tool call, or of the code,
    that started it), None for a run of its own."""
    budget = ctx.engine.budget
    return budget.parent if isinstance(budget, ChildBudget) else None


def report_spending(ctx: RunContext) -> None:
    """The run's last spending, counted after its last check: told to its parent (a
    sub-run), and added to the usage it carries (`usage=`)."""
    budget: Any = ctx.engine.budget
    if isinstance(budget, ChildBudget):
        budget.report(ctx)
        unlink_subrun(ctx, budget.parent)
        books = budget.parent.engine
        books.subruns = tuple(sub for sub in books.subruns if sub is not budget)
        budget = budget.own
    if budget is not None and budget.carried is not None:
        budget.count(ctx)


def count_capped_cost(ctx: RunContext) -> None:
    """A cost-capped run counts its last answers as it ends, not when `RunResult.spent` is
    first read: an unpriced model among them warns inside the run (`UnpricedModelWarning`,
    `network.run.limits`), as the answers before them did at the check before the next
    request. Made an error by the application, the warning then fails the run (with its
    partial result), never a later read of `result.spent`."""
    budget: Any = ctx.engine.budget
    if isinstance(budget, ChildBudget):
        budget = budget.own
    if budget is not None and budget.limits.max_cost_usd is not None:
        budget.count(ctx)  # counting is incremental: `spent` later counts nothing twice


_FIGURES = ("model_calls", "tool_calls", "input_tokens", "output_tokens", "cost_usd", "unpriced")


class SpentLater:
    """What a finished run spent, counted when first asked (`RunResult.spent`): its own
    calls, its sub-runs', router's and guardrails' requests. Counting walks the run's calls,
    so the run keeps only what counting reads (never its context: its deps, its sinks)."""

    __slots__ = (
        "budget",
        "call_count",
        "guardrails",
        "router_calls",
        "state",
        "subagent_calls",
        "subagent_tool_calls",
    )

    def __init__(self, ctx: RunContext) -> None:
        self.budget: Any = ctx.engine.budget
        self.state = ctx.state
        self.call_count = ctx.call_count
        self.router_calls = ctx.engine.router_calls
        self.guardrails = ctx.engine.guardrails
        self.subagent_calls = ctx.engine.subagent_calls
        self.subagent_tool_calls = ctx.engine.subagent_tool_calls

    @property
    def engine(self) -> SpentLater:
        """What a budget reads of the run's bookkeeping: kept here with the rest."""
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (a stopped run's `RunResult`, continued in another process) as its
        figures: a sub-run's budget would carry its caller's context along."""
        figures = self.figures()
        return (UsageFigures, tuple(getattr(figures, name) for name in _FIGURES))

    def figures(self) -> UsageFigures:
        """Count it now (a run without a budget: from what it recorded)."""
        budget = self.budget
        spent: UsageFigures = (budget if budget is not None else Budget(UsageLimits())).spent(self)
        return spent


def check_mapping(owner: str, option: str, mapping: Mapping[str, str] | None) -> dict[str, str]:
    """A `state_in` / `state_out` mapping `{key written: key read}`, checked: both strings,
    non-empty, and no `temp:` key read across runs (it is never shared)."""
    return mapping_entries(
        mapping,
        lambda: f"{owner}: {option} must be a mapping {{key written: key read}}, got {mapping!r}",
        functools.partial(_checked_source, owner, option),
    )


def _checked_source(owner: str, option: str, target: Any, source: Any) -> str:
    if not isinstance(target, str) or not target or not isinstance(source, str) or not source:
        raise ConfigurationError(
            f"{owner}: {option} maps {target!r} to {source!r}; both must be state keys "
            "(non-empty strings)"
        )
    for key in (target, source):
        problem = mapped_key_problem(key)  # never a key: the write would fail at every call
        if problem is not None:
            raise ConfigurationError(f"{owner}: {option}: {problem}")
    return source


ON_FAILURE = ("tell_model", "raise")  # what a failed sub-run does to the caller's run


@dataclass(frozen=True, slots=True, kw_only=True)
class SubrunTool:
    """A network offered to an agent as a tool (what `Network.as_tool` returns; `Agent`
    turns it into its tool, `agents.tools.subrun`). See `Network.as_tool` for the fields."""

    name: str
    description: str
    network_of: Callable[[RunContext], Any]  # the network to run, for the parent run
    label: str  # "network 'x'" / "agent 'y'": how errors name it
    state_in: Mapping[str, str] = field(default_factory=dict)
    state_out: Mapping[str, str] = field(default_factory=dict)
    max_iter: int | None = None
    limits: UsageLimits | None = None
    input_description: str = "the task, in plain words, with everything needed to do it"
    # fn(RunResult) -> the tool's result (default: the typed output, else the final text)
    output_extractor: Callable[[Any], Any] | None = None
    on_failure: str = "tell_model"  # or "raise": a failed sub-run fails the caller's run
    # the delegate's agents by name: an edited answer to a call held inside the sub-run is
    # checked against their tools before anything is claimed (`check_edits`)
    agents: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.output_extractor is not None and not callable(self.output_extractor):
            raise ConfigurationError(
                f"{self.label}: output_extractor must be a function of the sub-run's "
                f"RunResult, got {self.output_extractor!r}"
            )
        if self.on_failure not in ON_FAILURE:
            raise ConfigurationError(
                f"{self.label}: on_failure must be one of {', '.join(map(repr, ON_FAILURE))}, "
                f"got {self.on_failure!r}"
            )
        if self.limits is not None and not isinstance(self.limits, UsageLimits):
            raise ConfigurationError(
                f"{self.label}: limits must be UsageLimits, got {self.limits!r}"
            )
        check_max_iter(
            f"{self.label}: max_iter",
            self.max_iter,
            optional=True,
            hint="leave it out for the network's own",
        )
        if not isinstance(self.description, str):
            raise ConfigurationError(f"{self.label}: description must be a string")


__all__ = [
    "ChildBudget",
    "SpentLater",
    "SubrunTool",
    "adopt",
    "check_mapping",
    "is_subrun_id",
    "new_subrun_id",
    "report_spending",
    "subrun_id_for",
]
