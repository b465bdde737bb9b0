"""Answered calls that a parallel branch stopped on: found in the history, resumed in it.

A branch that ends at a call waiting for a person leaves the run stopped after the join
(`network.run.fork`). The run that answers it finds, in the stopped run's history, the call
that asked for the held tool call: its result names the branch (`InferenceResult.branch`),
and the fan-out is the run of branch results the history ends with. The branch is entered
again, as a fan-out's re-run of a failed branch is (`Parallel.restore` with the branches in
their declared order, the others committed): the answered calls run on its context (its
branch in `ToolContext.run.branch`, its own conversation as it stopped), its agent's tool loop
goes on to its answer, and its writes since then join through the keys' handlers, checked
against the writes its siblings made in the fan-out (a conflict is `StateConflictError`).

What a resumed branch cannot have back: the fan-out's options (it runs with the default
`max_steps`, `on_error="fail"`), a mapped branch's item (`Branch.item` is None), and the
state as it was at the fork (it reads the state the join left, its siblings' writes in it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from network.history.messages import AssistantMessage
from network.history.results import InferenceResult
from network.run.context import RunContext
from network.run.interrupts import Answer, Interrupt
from network.run.parallel import Branch, Parallel

Answered = list[tuple[Interrupt, Answer]]


@dataclasses.dataclass(slots=True)
class Resuming:
    """A fan-out some of whose branches are resumed (`run_parallel`'s `resuming`).

    Attributes:
        siblings: the branches not resumed, with their results in the fan-out: committed,
            their writes checked against the resumed branches', never replayed.
        conversations: each resumed branch's conversation as it stopped.
        inputs: each resumed branch's input (`RunContext.input`: a mapped branch's own).
        calls: by branch, the calls that finish its answered tool calls (made first).
    """

    siblings: dict[str, list[InferenceResult]]
    conversations: dict[str, list[Any]]
    inputs: dict[str, str]
    calls: dict[str, list[Any]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(slots=True)
class HeldFanOut:
    """The fan-out whose branches stopped on the answered calls, rebuilt from the history."""

    fork: Parallel
    answered: dict[str, Answered]  # by branch id, in declared order
    resuming: Resuming


def held_in_branches(
    ctx: RunContext, answered: Sequence[tuple[Interrupt, Answer]]
) -> tuple[HeldFanOut | None, Answered]:
    """The answers to calls held in parallel branches, as the fan-out that resumes them,
    and the others (a call of the run's own, resumed as before)."""
    history = ctx.engine.resumed_history
    block = trailing_branch_results(history)
    if not block:
        return None, list(answered)
    made_by = _call_makers(block)
    by_branch: dict[str, Answered] = {}
    rest: Answered = []
    fan_out: str | None = None
    for pair in answered:
        result = made_by.get(pair[0].tool_call_id)
        agent = _resumable(ctx, result)
        if result is None or result.branch is None or agent is None:
            rest.append(pair)
            continue
        name = result.branch.rpartition("/")[0]
        if fan_out is not None and name != fan_out:
            rest.append(pair)  # (one fan-out stops a run: never the case)
            continue
        fan_out = name
        by_branch.setdefault(result.branch, []).append(pair)
    if fan_out is None:
        return None, rest
    return _held(ctx, fan_out, [r for r in block if _fan_out_of(r) == fan_out], by_branch), rest


def _held(
    ctx: RunContext, name: str, block: list[InferenceResult], by_branch: dict[str, Answered]
) -> HeldFanOut:
    declared = list(dict.fromkeys(r.branch for r in block if r.branch is not None))
    latest = _latest_attempt(block)
    results = {
        branch: latest.get(branch) or [r for r in block if r.branch == branch][-1:]
        for branch in declared
        if branch in latest or branch in by_branch
    }
    branches = []
    for index, (branch_id, own) in enumerate(results.items()):
        agent = ctx.network.agents.get(own[-1].agent) if branch_id in by_branch else None
        branches.append(Branch(branch_id, agent if agent is not None else own[-1].agent, index))
    conversations, inputs = {}, {}
    for branch_id in by_branch:
        last = results[branch_id][-1]
        conversations[branch_id] = [*last.history, *last.messages()]
        inputs[branch_id] = last.input
    siblings = {b: own for b, own in results.items() if b not in by_branch}
    return HeldFanOut(
        Parallel.restore(name, branches),
        {b: by_branch[b] for b in results if b in by_branch},
        Resuming(siblings, conversations, inputs),
    )


def trailing_branch_results(history: Sequence[InferenceResult]) -> list[InferenceResult]:
    """The results the history ends with that were made in parallel branches, in order."""
    start = len(history)
    while start > 0 and history[start - 1].branch is not None:
        start -= 1
    return [history[i] for i in range(start, len(history))]


def _latest_attempt(block: Sequence[InferenceResult]) -> dict[str, list[InferenceResult]]:
    """Each branch's results in the fan-out that stopped, read from the end of the block.

    The join adds each branch's calls together, and a resume's join those of the branches it
    resumed: a branch met again belongs to the same fan-out when its earlier calls ended on a
    held call (it stopped there and was resumed), else to an earlier fan-out (an earlier
    turn's, whose writes are no sibling's), where the reading stops."""
    groups: dict[str, list[InferenceResult]] = {}
    previous: str | None = None
    for result in reversed(block):
        branch = result.branch
        assert branch is not None
        if branch != previous and branch in groups and not _held_call(result):
            break
        groups.setdefault(branch, []).insert(0, result)
        previous = branch
    return groups


def _held_call(result: InferenceResult) -> bool:
    """Whether the call asked for a tool call it has no result of (one held for a person)."""
    ran = {record.id for record in result.tool_calls}
    return any(
        tool_call.id not in ran
        for message in result.output
        if isinstance(message, AssistantMessage)
        for tool_call in message.tool_calls or ()
    )


def _call_makers(block: Sequence[InferenceResult]) -> Mapping[str, InferenceResult]:
    """By tool call id, the result whose answer asked for the call."""
    makers: dict[str, InferenceResult] = {}
    for result in block:
        for message in result.output:
            if isinstance(message, AssistantMessage):
                for tool_call in message.tool_calls or ():
                    makers[tool_call.id] = result
    return makers


def _fan_out_of(result: InferenceResult) -> str | None:
    return result.branch.rpartition("/")[0] if result.branch is not None else None


def _resumable(ctx: RunContext, result: InferenceResult | None) -> Any:
    """The agent of a branch's held call, when the branch can be entered again: one of the
    network's agents that can resume (a network branch's inner agents cannot be)."""
    if result is None or result.branch is None:
        return None
    key = result.branch.rpartition("/")[2].partition("#")[0]
    if key != result.agent:  # a network branch: its agent's call is the network's
        return None
    agent = ctx.network.agents.get(result.agent)
    if agent is None or not callable(getattr(agent, "resume", None)):
        return None
    return agent
