"""The run loop: ask the router, run one agent call, record it, ask again.

This is the only loop: `network.run` and `network.stream` both drive it; streaming, logging and
persistence are sinks on the context's emitter, not code in here.
"""

from __future__ import annotations

from typing import Any

from network.errors import RunStopped
from network.run.context import AgentLike, RunContext
from network.run.events import Custom, StepFinished, StepStarted
from network.run.fork import run_parallel
from network.run.parallel import Parallel
from network.run.result import Stop, StopReason
from network.run.stages import first_stop
from network.state.provenance import agent_writer


async def run_loop(ctx: RunContext, max_iter: int) -> Stop:
    """Run agent calls until the router stops or `max_iter` calls were made."""
    network = ctx.network
    state = ctx.state
    kv = state.kv
    books = ctx.engine  # the engine's bookkeeping of the run (never replaced during it)
    emitter = books.emitter
    route = network.router
    while True:
        kv.writer = (None, ctx.call_count, None, None, "router", None)  # router_writer, inline
        if books.steps is None:
            choice = route(ctx)
            if hasattr(choice, "__await__"):
                choice = await choice
        else:  # a durable run: the decision is recorded (network.run.steps)
            choice = await books.steps.route(ctx, route)
        if emitter.active:
            await emitter.flush_state(kv)
        if isinstance(choice, Stop):
            return choice
        last = ctx.last_result
        if choice is None and not ctx.stack and last is not None and last.branch is None:
            # a handoff the router let through (see network.history.handoffs), whoever
            # recorded it: the run's rule over its history, not a stage of the handoffs
            # capability; a parallel branch's is not followed: one of several side by side
            handoff = last.handoff
            choice = None if handoff is None else handoff.target
        if choice is not None:
            ctx.stack.extend(network.resolve(choice))
        if not ctx.stack:
            return Stop(StopReason.ROUTER_FINISHED)
        if ctx.call_count >= max_iter:
            return Stop(StopReason.MAX_ITER)
        budget = books.budget  # usage limits: checked before each agent call's model request
        if budget is not None and budget.check(ctx) is not None:
            return Stop(StopReason.USAGE_LIMIT)
        if books.stages.next_call:  # the capabilities' say before each call (a fan-out's)
            stop = first_stop(ctx, books.stages.next_call)  # (tested: no iterator when none)
            if stop is not None:
                return stop
        agent = ctx.stack.pop(0)
        try:  # free unless raised: a guardrail's trip ends the call, uncommitted
            if isinstance(agent, Parallel):  # a fan-out: see network.run.fork
                stop = await run_parallel(ctx, agent, max_iter, call_agent, run_loop)
                if stop is not None:
                    return stop
            elif emitter.active:
                await call_agent(ctx, agent)
            else:  # call_agent without events, one coroutine less per step (see begin_call)
                ctx.agent = agent  # begin_call, written out (a Python call less on every step)
                kv.writer = (agent.name, ctx.call_count, None, None, "agent", None)
                record_call(ctx, await agent.call(ctx))
        except RunStopped as stopped:  # a capability ended the run (a guardrail's trip, ...)
            if emitter.open_steps:  # a fan-out's step, which its branch's stop left open
                await end_open_steps(ctx)
            ctx.agent = None
            return Stop(stopped.stop_reason, stopped.summary, stopped)
        if books.interrupts:  # a tool waits for a person: see network.run.interrupts
            return Stop(StopReason.INTERRUPTED)
        if books.pending_tool_calls:  # a client runs a tool: see network.run.client_tools
            return Stop(StopReason.CLIENT_TOOL)


async def end_open_steps(ctx: RunContext) -> None:
    """STEP_FINISHED for the steps a trip left open (a fan-out's), innermost first."""
    emitter = ctx.engine.emitter
    while emitter.open_steps:
        name = emitter.open_steps.pop()
        await emitter.emit(StepFinished(name, fan_out=name))


async def call_agent(ctx: RunContext, agent: AgentLike) -> None:
    """One agent call: the agent's inference and tools, then its result joins the history."""
    emitter = ctx.engine.emitter
    if not emitter.active:
        begin_call(ctx, agent)
        record_call(ctx, await agent.call(ctx))
        return
    name = agent.name
    begin_call(ctx, agent)
    emitter.open_steps.append(name)
    await emitter.emit(StepStarted(name))
    try:
        result = await agent.call(ctx)
    except RunStopped as stopped:  # the step ends, nothing to commit
        await emitter.close_messages()  # what the cancelled call streamed is closed
        if stopped.event is not None:  # the capability's own word on the stop
            await emitter.emit(Custom(*stopped.event))
        emitter.open_steps.remove(name)
        await emitter.emit(StepFinished(name))
        raise
    await emitter.flush_state(ctx.state.kv)
    record_call(ctx, result)
    emitter.open_steps.remove(name)
    await emitter.emit(StepFinished(name))


def begin_call(ctx: RunContext, agent: AgentLike) -> None:
    """What comes before an agent call: the agent is the current one, and writes its own.

    `call_agent` is `begin_call`, `await agent.call(ctx)`, `record_call`, with the step's
    events around them when the run has a sink; without one, the loop does the same itself
    (with `begin_call`'s two lines written out). Every coroutine in the chain a step awaits
    through is an object that lives across the model's answer, which the garbage collector
    rescans while many runs wait.
    """
    ctx.agent = agent
    ctx.state.kv.writer = agent_writer(agent.name, ctx.call_count)


def record_call(ctx: RunContext, result: Any) -> None:
    """The agent call's result joins the history: its state delta, messages and usage."""
    state = ctx.state
    result.state_delta = state.kv.take_ops()
    state.add_result(result)
    ctx.last_result = result
    ctx.call_count += 1
    ctx.add_usage(result.usage)
    ctx.agent = None
