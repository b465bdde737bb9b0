"""Finishing the tool calls a run stopped on, as the first step of the run that answers them.

See `network.run.interrupts` for the whole flow.
"""

from __future__ import annotations

from typing import Protocol, cast

from network.errors import ConfigurationError
from network.history.results import InferenceResult
from network.run.context import AgentLike, RunContext
from network.run.fork import run_parallel
from network.run.held_branches import held_in_branches
from network.run.interrupts import Answer, Interrupt
from network.run.loop import call_agent, run_loop
from network.run.result import Stop


async def resume_interrupted(ctx: RunContext, max_iter: int) -> Stop | None:
    """Finish the answered tool calls (`ctx.engine.resume`) as a step of their agent; those
    held in a parallel branch inside that branch, which goes on to its agent's answer and
    joins (`network.run.held_branches`). A `Stop` when the branches' calls reached the run's
    `max_iter` or usage limits (the run stops after the join)."""
    answered = ctx.engine.resume
    ctx.engine.resume = ()
    held, answered = held_in_branches(ctx, answered)
    ctx.engine.resumed_history = ()  # (a thread's stays its state's; a copy's is let go)
    stop = None
    if held is not None:
        for branch_id, pairs in held.answered.items():
            held_by = cast(ResumableAgent, ctx.network.agents[pairs[0][0].agent])
            held.resuming.calls[branch_id] = [
                _Resumption(held_by, call) for call in _calls(ctx, held_by, pairs)
            ]
        stop = await run_parallel(ctx, held.fork, max_iter, call_agent, run_loop, held.resuming)
    by_agent: dict[str, list[tuple[Interrupt, Answer]]] = {}
    for pair in answered:
        by_agent.setdefault(pair[0].agent, []).append(pair)
    for name, pairs in by_agent.items():
        agent = ctx.network.agents.get(name)
        if agent is None or not callable(getattr(agent, "resume", None)):
            raise ConfigurationError(
                f"cannot resume tool calls of agent {name!r}: network {ctx.network.name!r} "
                "has no such agent that can resume"
            )
        resumable = cast(ResumableAgent, agent)
        for call in _calls(ctx, resumable, pairs):
            await call_agent(ctx, _Resumption(resumable, call))
    return stop


def _calls(
    ctx: RunContext, agent: ResumableAgent, answered: list[tuple[Interrupt, Answer]]
) -> list[list[tuple[Interrupt, Answer]]]:
    """The agent calls that continue `answered`, in order: as the agent splits them
    (`resumption_calls`: its capabilities' `resume_calls` stages, e.g. one remote task a
    call), else one call for them all."""
    split = getattr(agent, "resumption_calls", None)
    if split is None:
        return [answered]
    calls: list[list[tuple[Interrupt, Answer]]] = split(ctx, answered)
    return calls


class ResumableAgent(AgentLike, Protocol):
    """An agent that can finish the tool calls it held for a person (`agents.Agent`)."""

    async def resume(
        self, ctx: RunContext, answered: list[tuple[Interrupt, Answer]]
    ) -> InferenceResult: ...

    # Optional: `resumption_calls(ctx, answered)`, the answers split into the calls that
    # continue them (default: one call for all of them).


class _Resumption:
    """Looks like the agent to the run loop; its call finishes the waiting tool calls."""

    __slots__ = ("agent", "answered", "description", "name")

    def __init__(self, agent: ResumableAgent, answered: list[tuple[Interrupt, Answer]]) -> None:
        self.agent = agent
        self.name: str = agent.name
        self.description: str = getattr(agent, "description", "")
        self.answered = answered

    async def call(self, ctx: RunContext) -> InferenceResult:
        ctx.agent = self.agent
        return await self.agent.resume(ctx, self.answered)
