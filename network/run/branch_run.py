"""One parallel branch's own run: its agent's tool loop, or a network's routed calls.

A branch runs its agent until it answers (`Parallel`'s module docstring): one call through the
run's agent-call path (`call_agent`, handed in by the loop), then, while the answer asked for
tools and nothing stops it, another call that reads their results: what `agent.run` does alone,
on the branch's own conversation (the fork's, its own input, its own calls; never a
sibling's). It stops at an answer without tool calls, a skipped call, a call waiting for a
person or a client, or `max_steps` calls, where a branch still asking for tools fails with
`MaxStepsExceeded`. (A handoff asked for in a branch is refused by the handoffs capability,
so the branch goes on; one recorded anyway, by a capability of the application's, ends it.)

A network branch runs that network's router and agents on the branch, through the run loop
itself (`run_loop`, handed in): its own `max_iter` caps it (reaching it is `MaxStepsExceeded`
too), its own capabilities and the run's apply, and its calls are the branch's.

What a branch spends counts in the run as it happens: before each call after its first, a
branch checks the run's `max_iter` against every branch's calls so far (`FanOutRoom`), the
run's usage limits with every branch's requests and tool calls so far (`BranchBudget`), and
the run's `next_call` stages. A `Stop` from them ends the branch; the fan-out returns it after
the join.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from network.errors import MaxStepsExceeded
from network.history.log import RecordLog
from network.history.results import InferenceResult, ModelCall
from network.run.capability import Capability
from network.run.context import NetworkLike, RunContext
from network.run.limits import NOTHING_UNRECORDED, LimitExceeded, Unrecorded, UsageLimits
from network.run.parallel import Branch, Parallel
from network.run.result import Stop, StopReason
from network.run.stages import first_stop, run_stages

CallAgent = Callable[[RunContext, Any], Awaitable[None]]
RunLoop = Callable[[RunContext, int], Awaitable[Stop]]

# How a network branch's own run may end that ends the run too, after the join (any other
# stop leaves the branch done: its router finished, or it waits for a person or a client).
_THE_RUNS = frozenset({StopReason.USAGE_LIMIT, StopReason.GUARDRAIL, StopReason.MAX_ITER})


@dataclasses.dataclass(slots=True)
class FanOutRoom:
    """What is left of the run's `max_iter` for the branches' calls after their first (the
    first ones were counted when the fan-out started).

    A fan-out inside a network branch has the enclosing fan-out's room as its `parent`: its
    calls count in both (the run's `max_iter` caps every call, however deep). A room that
    had none left, and those below it, are `exhausted`: the run's cap was reached, not the
    network branch's own `max_iter`.
    """

    left: int
    exhausted: bool = False
    parent: FanOutRoom | None = None

    def take(self, calls: int = 1) -> bool:
        """`calls` more calls, if there is room for them here and in every room above."""
        room: FanOutRoom | None = self
        below: list[FanOutRoom] = []
        while room is not None:
            below.append(room)
            if room.left < calls:
                for full in below:
                    full.exhausted = True
                return False
            room = room.parent
        for room in below:
            room.left -= calls
        return True


class BranchBudget:
    """The run's usage limits as its branches check them: the run's budget, counting the
    requests and tool calls every branch of the fan-out made so far (not yet in the run's
    history), and, in `max_model_calls`, the requests of the siblings' calls under way (sent,
    not recorded until the call ends) and the first request of each sibling not started yet
    (the fork counted it when it let the fan-out start): a branch's next request goes ahead
    only when it fits beside all of them.

    A branch's own call under way is its checker's to count (a guardrail's or a sub-run's
    check passes it as `Unrecorded`), so a check leaves out the branch it is made from. A
    network branch runs its calls on a context of its own (`watch`); a fan-out it runs
    counts through that fan-out's own budget (what its branches recorded and have under
    way, until they join the network branch), and the sub-runs a sibling's tools run count
    theirs (`ChildBudget.settle`).
    """

    __slots__ = ("branches", "ended", "exceeded", "live", "parent", "started")

    def __init__(self, parent: RunContext, branches: Sequence[RunContext]) -> None:
        self.parent = parent
        self.branches = branches
        self.exceeded: LimitExceeded | None = None
        # where each branch's calls run (its context; a network branch's loop, once started)
        self.live: dict[str, RunContext] = {_branch_id(c): c for c in branches}
        self.started: set[str] = set()  # branches under way (the others wait for their turn)
        self.ended: set[str] = set()  # branches that returned or failed: nothing under way

    def start(self, branch: RunContext) -> None:
        """`branch` began: its first call is its own to check, no longer a reservation."""
        self.started.add(_branch_id(branch))

    def watch(self, branch: RunContext, runs_on: RunContext) -> None:
        """`branch`'s calls run on `runs_on` from now (a network branch's loop)."""
        self.live[_branch_id(branch)] = runs_on

    def end(self, branch: RunContext) -> None:
        """`branch` returned or failed: it has no request under way, nor one to come."""
        self.ended.add(_branch_id(branch))

    def under_way(self, checking: RunContext | None) -> int:
        """The requests not recorded yet of the branches but `checking`'s: one per call
        under way (its context has a current agent), one per branch waiting for its turn,
        and those of a fan-out or a sub-run inside one."""
        own = checking.branch.id if checking is not None and checking.branch else None
        count = 0
        for branch in self.branches:
            branch_id = _branch_id(branch)
            if branch_id == own or branch_id in self.ended:
                continue
            if branch_id not in self.started:
                count += 1  # its first call, counted when the fan-out started
                continue
            runs_on = self.live[branch_id]
            if runs_on.agent is not None:
                count += 1
            inner = _inner_budget(runs_on)
            if inner is not None:
                count += inner.under_way(None)
            count += sum(sub.settle() for sub in runs_on.engine.subruns)  # its delegations'
        return count

    @property
    def limits(self) -> UsageLimits | None:
        budget: Any = self.parent.engine.budget
        return budget.limits if budget is not None else None

    def spent(self, checking: str | None = None) -> list[ModelCall]:
        """The requests of every branch's own calls so far, of their routers, sub-runs and
        fan-outs (until their branches join theirs; but the fan-out of branch `checking`,
        whose own check passes them)."""
        calls: list[ModelCall] = []
        for branch in self.branches:
            branch_id = _branch_id(branch)
            for result in own_results(branch):
                calls.extend(result.model_calls)
            runs_on = self.live[branch_id]
            calls.extend(runs_on.engine.router_calls)
            calls.extend(runs_on.engine.subagent_calls)
            inner = _inner_budget(runs_on) if branch_id != checking else None
            if inner is not None:
                calls.extend(inner.spent())
        return calls

    def tool_calls(self, checking: str | None = None) -> int:
        """The tool calls every branch made so far, its sub-runs' and fan-outs' included
        (but the fan-out of branch `checking`, as in `spent`)."""
        count = 0
        for branch in self.branches:
            branch_id = _branch_id(branch)
            runs_on = self.live[branch_id]
            count += sum(len(result.tool_calls) for result in own_results(branch))
            count += runs_on.engine.subagent_tool_calls
            inner = _inner_budget(runs_on) if branch_id != checking else None
            if inner is not None:
                count += inner.tool_calls()
        return count

    def check(
        self, ctx: RunContext, unrecorded: Unrecorded = NOTHING_UNRECORDED
    ) -> LimitExceeded | None:
        """The run's limits, with what the branches spent (requests and tool calls) and
        `unrecorded` (see `Unrecorded`; a sub-run of a branch's tool passes its own, as
        `ChildBudget` does to any parent budget)."""
        budget: Any = self.parent.engine.budget
        under_way = self.under_way(ctx)  # first: it reports what the siblings' sub-runs recorded
        own = ctx.branch.id if ctx.branch is not None else None
        branches = Unrecorded(self.spent(own), pending=under_way, tools=self.tool_calls(own))
        exceeded: LimitExceeded | None = budget.check(self.parent, branches + unrecorded)
        if exceeded is not None:
            self.exceeded = exceeded
        return exceeded

    def check_fan_out(self, branches: int) -> LimitExceeded | None:
        """Whether a fan-out of `branches` (inside a network branch) fits in the limits."""
        return self.check(self.parent, Unrecorded(pending=branches - 1))


def _inner_budget(runs_on: RunContext) -> BranchBudget | None:
    """The budget of the fan-out a network branch is running now, if any."""
    inner = runs_on.engine.branch_contexts
    budget = inner[0].engine.budget if inner else None
    return budget if isinstance(budget, BranchBudget) else None


def _branch_id(ctx: RunContext) -> str:
    branch = ctx.branch
    assert branch is not None  # a branch's context
    return branch.id


def own_results(ctx: RunContext) -> list[InferenceResult]:
    """The results a branch's context recorded itself (after the fork's shared history)."""
    results = ctx.state.results
    return results.own() if isinstance(results, RecordLog) else []


async def run_branch(
    ctx: RunContext,
    branch: Branch,
    fork: Parallel,
    room: FanOutRoom,
    call_agent: CallAgent,
    run_loop: RunLoop,
    resumed: Mapping[str, Sequence[Any]] | None = None,
) -> Stop | None:
    """Run `branch` on its context `ctx` until its agent answers (see the module docstring);
    a `Stop` when the run must end after the join. `resumed`: by branch id, the calls that
    finish the tool calls a branch stopped on (`network.run.held_branches`): that branch
    makes them first, then its agent's tool loop goes on."""
    budget = ctx.engine.budget
    if isinstance(budget, BranchBudget):
        budget.start(ctx)
    first = resumed.get(branch.id, ()) if resumed is not None else ()
    try:
        return await _run_branch(ctx, branch, fork, room, call_agent, run_loop, first)
    finally:
        if isinstance(budget, BranchBudget):
            budget.end(ctx)


async def _run_branch(
    ctx: RunContext,
    branch: Branch,
    fork: Parallel,
    room: FanOutRoom,
    call_agent: CallAgent,
    run_loop: RunLoop,
    first: Sequence[Any] = (),
) -> Stop | None:
    target = branch.agent
    if runs_a_network(branch):
        return await _run_network(ctx, branch, target, room, run_loop)
    steps = 0
    for resumption in first:  # the answered calls it stopped on, each a call of the run
        await call_agent(ctx, resumption)
        steps += 1
    if first and not _asks_again(ctx):
        return None
    while True:
        if first:  # its loop goes on after the answered calls: checked as any next call
            first = ()
            stop = _before_next_call(ctx, room)
            if stop is not None:
                return stop
        await call_agent(ctx, target)
        steps += 1
        if not _asks_again(ctx):
            return None
        if steps >= fork.max_steps:
            raise MaxStepsExceeded(
                f"parallel branch {branch.id!r}: agent {target.name!r} still asked for tools "
                f"after max_steps={fork.max_steps} calls; give the fan-out a larger "
                "Parallel(max_steps=...) or tell the agent when to answer",
                agent=target.name,
                branch=branch.id,
                max_steps=fork.max_steps,
            )
        stop = _before_next_call(ctx, room)
        if stop is not None:
            return stop


def runs_a_network(branch: Branch) -> bool:
    """Whether `branch` runs a network (its calls are counted from 0 on its own context)."""
    return not callable(getattr(branch.agent, "call", None))


def _asks_again(ctx: RunContext) -> bool:
    """Whether the branch's last call wants another: it ran tools, nothing else ended it."""
    last = ctx.last_result
    return (
        last is not None
        and bool(last.tool_calls)
        and not last.skipped
        and last.handoff is None
        and not ctx.engine.interrupts
        and not ctx.engine.pending_tool_calls
    )


def _before_next_call(ctx: RunContext, room: FanOutRoom) -> Stop | None:
    """The run loop's checks before a call, for a branch's next one."""
    if not room.take():
        return Stop(StopReason.MAX_ITER)
    budget = ctx.engine.budget
    if budget is not None and budget.check(ctx) is not None:
        return Stop(StopReason.USAGE_LIMIT)
    return first_stop(ctx, ctx.engine.stages.next_call)


class _Room(Capability):
    """A network branch's calls after its first count in the run's `max_iter`."""

    def __init__(self, room: FanOutRoom) -> None:
        self.room = room

    def next_call(self, run: RunContext) -> Stop | None:
        if run.call_count == 0 or self.room.take():  # the first was counted at the fork
            return None
        return Stop(StopReason.MAX_ITER)


async def _run_network(
    ctx: RunContext, branch: Branch, network: NetworkLike, room: FanOutRoom, run_loop: RunLoop
) -> Stop | None:
    """A network branch: its router and agents, on the branch's state and conversation."""
    outer: tuple[Capability, ...] = getattr(ctx.network, "capabilities", ())
    # the run's own capabilities (an AG-UI client's tools) are those its network did not bring
    run_own = [c for c in ctx.engine.stages.capabilities if not any(c is known for known in outer)]
    inner = dataclasses.replace(
        ctx,
        network=network,
        call_count=0,
        stack=[],
        last_result=None,
        engine=dataclasses.replace(
            ctx.engine,
            stages=run_stages((_Room(room), *run_own, *getattr(network, "capabilities", ()))),
            fan_out_room=room,  # a fan-out its router returns counts in this one's room too
        ),
    )
    budget = ctx.engine.budget
    if isinstance(budget, BranchBudget):
        budget.watch(ctx, inner)
    stop = await run_loop(inner, network.max_iter)
    # what the network's run leaves the branch: its calls (in the shared state), its spending
    ctx.call_count += inner.call_count
    ctx.last_result = inner.last_result
    books, spent = ctx.engine, inner.engine
    books.prompt_tokens, books.completion_tokens = spent.prompt_tokens, spent.completion_tokens
    books.total_tokens, books.usage_estimated = spent.total_tokens, spent.usage_estimated
    books.cached_tokens, books.reasoning_tokens = spent.cached_tokens, spent.reasoning_tokens
    books.interrupts, books.pending_tool_calls = spent.interrupts, spent.pending_tool_calls
    books.router_calls, books.subagent_calls = spent.router_calls, spent.subagent_calls
    books.subagent_tool_calls = spent.subagent_tool_calls
    ctx.failed_branches = inner.failed_branches
    reason = stop.reason
    if reason == StopReason.MAX_ITER and not room.exhausted:
        raise MaxStepsExceeded(
            f"parallel branch {branch.id!r}: network {network.name!r} reached its "
            f"max_iter={network.max_iter} before its router finished",
            agent=network.name,
            branch=branch.id,
            max_steps=network.max_iter,
        )
    if reason in _THE_RUNS:
        return stop
    return None


__all__ = ["BranchBudget", "FanOutRoom", "own_results", "run_branch", "runs_a_network"]
