"""The run kernel: one run of a network definition, from its input and options to its result.

`Network.run` is the door; this is the machinery behind it, below the facade, taking the
network as data (a `RunnableNetwork`). Everything that carries a run out calls it, never back
into the facade:

- `run(network, input, options, steps=, parent=)`: a new message (on a thread through its
  session, or in memory), or a continuation (`Resume`, `ToolResults`, prepared by
  `network.continuing`). `steps` is the durable engine's hook (`network.run.steps`): its
  workflow carries the run out through here with each step recorded. `parent` makes the run a
  sub-run of another (an agent or a network used as a tool, `network.run.subrun`); a run
  started inside another run's code without one counts against that run
  (`network.run.budgets.caller`). `options.durable` is not read here: handing a run to the
  durable engine is the facade's (`Network.run`), whose workflow comes back here;
- `execute(network, ctx, sinks=)`: a context prepared elsewhere (a protocol server's
  admission, `network.serving`);
- what every run gets from its definition on the way: its resources, its usage limits (the
  run's own over the network's), its shared budgets, its capabilities' run stages and its
  telemetry sink when it is traced.

`run` and `execute` are not coroutines: they hand back the execution's own coroutine (a run
without a thread awaits the engine directly), so that a run's steps do not resume through one
more frame each.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any

from network.continuing import continuation
from network.errors import ConfigurationError
from network.history.messages import UserMessage
from network.history.unanswered import not_run_results
from network.ids import new_id
from network.run import engine
from network.run.budgets.caller import calling_run
from network.run.budgets.shared import coerce_budgets
from network.run.context import RunBookkeeping, RunContext
from network.run.definition import RunnableNetwork
from network.run.emitter import Observer, Sink
from network.run.inputs import Resume, RunInput, ToolResults
from network.run.limits import Budget, UsageLimits
from network.run.options import RunOptions
from network.run.resources import run_resources
from network.run.result import RunResult
from network.run.steps import StepRunner
from network.run.subrun import adopt
from network.run.thread_ref import ThreadRef
from network.sessions import open_session
from network.state.state import State
from network.telemetry.activate import run_spans

if TYPE_CHECKING:
    from network.threads.session import ThreadSession


def run(
    network: RunnableNetwork,
    input: RunInput,
    options: RunOptions,
    *,
    steps: StepRunner | None = None,
    parent: RunContext | None = None,
) -> Awaitable[RunResult]:
    """Carry out one run of `network` on `input` with `options` (see the module docstring)."""
    if parent is None:  # started inside another run (a tool's `await other.run(...)`)
        parent = calling_run(network.name)  # it counts against that run (budgets.caller)
    if isinstance(input, str):
        if options.thread is None:
            ctx = _new_context(network, input, options, steps, None)
            return _start(network, ctx, None, options, parent)
        return _thread_run(network, input, options, options.thread, steps, parent)
    if isinstance(input, Resume | ToolResults):
        return _continue(network, input, options, steps, parent)
    raise ConfigurationError(
        f"network {network.name!r}: run() takes a message (str), Resume or ToolResults, "
        f"got {type(input).__name__}"
    )


def execute(
    network: RunnableNetwork,
    ctx: RunContext,
    *,
    max_iter: int | None = None,
    sinks: Sequence[Sink] = (),
) -> Awaitable[RunResult]:
    """Drive the loop for a context prepared elsewhere, with its event sinks: the network's
    resources join the context's own (which win a name); its usage limits, its capabilities'
    run stages and its telemetry sink are added."""
    ctx.engine.resources.add_defaults(network.resources)
    return engine.execute(ctx, max_iter=max_iter, sinks=_observe(network, ctx, sinks))


def _new_context(
    network: RunnableNetwork,
    input: str,
    options: RunOptions,
    steps: StepRunner | None,
    session: ThreadSession | None,
) -> RunContext[Any]:
    """The context of a new run on `input` (its state the thread's, on a session)."""
    run_state = network.new_state(options.state) if session is None else session.state
    if session is None and isinstance(options.state, State):  # a conversation continued
        # may end with calls a stopped run left waiting: answered as not run before the new
        # message, as on a thread (`_thread_run`), or the providers refuse the request
        run_state.append_messages(not_run_results(run_state.messages))
    ctx: RunContext[Any] = RunContext(
        network=network,
        state=run_state,
        input=input,
        run_id=options.run_id or new_id("run_"),
        thread_id=None if session is None else session.thread_id,
        deps=options.deps,
        engine=RunBookkeeping(
            resources=run_resources("run", options.resources, network.resources), steps=steps
        ),
    )
    if input:  # "" is no message: a run that only writes `state=` (or lets a router act)
        run_state.append_messages([UserMessage(input)])
    return ctx


def _start(
    network: RunnableNetwork,
    ctx: RunContext,
    session: ThreadSession | None,
    options: RunOptions,
    parent: RunContext | None,
) -> Awaitable[RunResult]:
    """Execute a prepared run (a new one or a continuation): its limits (the run's own over
    the network's) and telemetry set, on its thread session when it has one; with `parent`,
    as a sub-run of that run (`network.run.subrun`: its spending is the parent's, its trace
    nests under the parent's); on its shared budgets when it has some."""
    if parent is not None:
        adopt(ctx, parent, options.limits or network.limits, options.usage)
    elif options.limits is not None or options.usage is not None:
        limits = options.limits or network.limits or UsageLimits()
        ctx.engine.budget = Budget(limits, carried=options.usage)
    budgets = (
        network.budget if options.budget is None else coerce_budgets(network.name, options.budget)
    )
    observed = _observe(network, ctx, options.sinks, metered=bool(budgets))
    execute = engine.execute if session is None else session.execute
    if budgets:  # [budgets] shared budgets: the run's accounts open first, close after
        from network.threads.ledgers import on_budgets  # noqa: PLC0415 (thread stores load on use)

        carried_out = functools.partial(execute, ctx, max_iter=options.max_iter, sinks=observed)
        return on_budgets(ctx, session, budgets, carried_out)
    return execute(ctx, max_iter=options.max_iter, sinks=observed)


async def _thread_run(
    network: RunnableNetwork,
    input: str,
    options: RunOptions,
    thread: ThreadRef,
    steps: StepRunner | None,
    parent: RunContext | None,
) -> RunResult:
    """A new message on a stored thread: its session opened, what it waited on left."""
    _refuse_history_on_thread(thread, options.state)
    session = await open_session(network, thread, state=options.state, steps=steps)
    # The calls it waited on, answered as not run before the new message (a conversation
    # with a call and no result is refused by the providers); a call answered already whose
    # run died before its result was saved is said to be unfinished, not "not run". Then
    # what a request said beside its answers while one of them waited again
    # (`PendingCall.held`): the user's words, after the results.
    waiting = {entry.tool_call_id for entry in session.pending}
    held = [message for entry in session.pending for message in entry.held]
    results = not_run_results(session.state.messages, waiting=waiting)
    session.state.append_messages([*results, *held])
    ctx = _new_context(network, input, options, steps, session)
    session.supersede_pending(ctx.run_id)
    return await _start(network, ctx, session, options, parent)


async def _continue(
    network: RunnableNetwork,
    request: Resume | ToolResults,
    options: RunOptions,
    steps: StepRunner | None,
    parent: RunContext | None,
) -> RunResult:
    """A continuation: prepared by `network.continuing`, then started as any run."""
    ctx, session = await continuation(network, request, options, steps)
    return await _start(network, ctx, session, options, parent)


def _observe(
    network: RunnableNetwork,
    ctx: RunContext,
    sinks: Sequence[Sink],
    *,
    metered: bool = False,
) -> Sequence[Sink]:
    """The network's default limits, the run's stages (the network's capabilities, with a
    run's own where it has some: `RunnableNetwork.run_stages_for`) and the telemetry sink
    when the run is traced.

    The sink starts the run's root span here, before RUN_STARTED, which carries its ids.
    It is an `Observer`: tracing a run never makes its model requests stream.
    """
    if ctx.engine.budget is None and network.limits is not None:
        ctx.engine.budget = Budget(network.limits)
    # a sink that reads the run live sees a running tool's writes (`StateProgress`); without
    # sinks (most runs), no generator is made to find that out
    live = bool(sinks) and any(not isinstance(sink, Observer) or sink.streams for sink in sinks)
    ctx.engine.stages = network.run_stages_for(ctx, metered=metered, live=live)
    spans = run_spans(ctx)
    # kept when the caller asked for them (the AG-UI server reports usage per model)
    ctx.engine.record_model_calls = (
        ctx.engine.record_model_calls or spans is not None or ctx.engine.budget is not None
    )
    # the spans only watch the run: they never make a model request stream (`Observer`); the
    # sinks as given otherwise (no list per run: its coroutines keep it while the run lives)
    return [*sinks, Observer(spans)] if spans is not None else sinks


def _refuse_history_on_thread(thread: ThreadRef, state: Any) -> None:
    """A `State` with a conversation or agent calls cannot seed a thread run: the thread holds
    its own, and silently dropping the given ones would lose them."""
    if isinstance(state, State) and (len(state.messages) or len(state.results)):
        raise ConfigurationError(
            f"thread {thread.id!r}: state= is a State with {len(state.messages)} messages "
            f"and {len(state.results)} agent calls, but a thread run continues the thread's "
            "own conversation; pass only its key-values (state=state.kv.data), or run "
            "without thread= to continue from the State"
        )
