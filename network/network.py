"""`Network`: a team of agents, a router that picks who runs next, and a state schema.

A Network is a definition: running it never changes it. Each run gets a fresh `State` built
from the schema and a deep copy of the initial data.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic

import anyio

from network.errors import ConfigurationError, RoutingError
from network.history.messages import UserMessage
from network.ids import new_id
from network.numbers import check_number
from network.run import engine
from network.run.client_results import result_messages
from network.run.context import AgentLike, DepsT, Router, RunContext
from network.run.emitter import AnySink
from network.run.interrupts import pending_answers, restore_rejected
from network.run.limits import Budget, UsageLimits
from network.run.parallel import Parallel
from network.run.predictive_config import check_predict_state
from network.run.resources import ResourceFactory, Resources, check_factories
from network.run.result import RunResult
from network.run.retry_policy import RetryPolicy
from network.run.steps import StepRunner
from network.run.streaming import EventStream
from network.run.tool_defaults import check_tool_defaults
from network.state.schema import StateSchema
from network.state.state import State
from network.telemetry.activate import run_spans
from network.telemetry.options import Telemetry

if TYPE_CHECKING:
    from network.threads.checkpoint_data import Checkpoint, ForkResult, RewindReport
    from network.threads.session import ThreadSession

DEFAULT_MAX_ITER = 100


class Network(Generic[DepsT]):
    """A team of agents run by a router over one shared state.

    Args:
        name: the network's name (logs, traces, AG-UI).
        agents: the agents; names must be unique.
        router: `router(ctx)` returning the next agent(s), an agent name, a `Stop`, or None to
            finish. Optional only for a one-agent network, which then runs its agent once.
        default_model: the model of every agent that names none (a litellm model string such as
            `"openai/gpt-4o-mini"`, or a `Model` object).
        max_iter: the most agent calls one run may make (default 100).
        state_schema: a Haystack-style dict, a pydantic model class, or a `StateSchema`.
        resources: `{name: factory}`: live things every run may open (`await
            ctx.resource(name)`); see `network.run.resources`.
        deps_type: the type of the `deps=` runs take, for type checkers only
            (`Network[Deps]` says the same).
        context_policy: the default `agents.ContextPolicy` of agents that set none: what each
            model request may hold (messages, tokens, summaries) on long threads.
        tool_timeout: seconds a tool call may take when neither the tool nor its agent sets
            a limit; a call past it is an error result the model sees, and the run goes on.
        tool_retry: the `RetryPolicy` of tool calls when neither the tool nor its agent sets
            one (see `@tool(retry=...)`).
        limits: the default `UsageLimits` of every run (a run's `limits=` replaces them).
        telemetry: OpenTelemetry options (`network.telemetry.Telemetry`); runs are traced
            whenever the application configured an OpenTelemetry SDK, without them too.
    """

    def __init__(
        self,
        name: str,
        agents: Sequence[AgentLike],
        router: Router[DepsT] | None = None,
        default_model: Any = None,
        max_iter: int = DEFAULT_MAX_ITER,
        *,
        state_schema: Any = None,
        predict_state: Mapping[str, Mapping[str, str]] | None = None,
        resources: Mapping[str, ResourceFactory] | None = None,
        deps_type: type[DepsT] | None = None,
        context_policy: Any = None,
        tool_timeout: float | None = None,
        limits: UsageLimits | None = None,
        telemetry: Telemetry | None = None,
        tool_retry: RetryPolicy | None = None,
    ) -> None:
        if not name or not isinstance(name, str):
            raise ConfigurationError(f"a network needs a name, got {name!r}")
        self.name = name
        self.agents: dict[str, AgentLike] = {}
        for agent in agents:
            agent_name = getattr(agent, "name", None)
            if not isinstance(agent_name, str) or not callable(getattr(agent, "call", None)):
                raise ConfigurationError(f"network {name!r}: {agent!r} is not an agent")
            if agent_name in self.agents:
                raise ConfigurationError(f"network {name!r}: two agents are named {agent_name!r}")
            self.agents[agent_name] = agent
        if not self.agents:
            raise ConfigurationError(f"network {name!r} has no agents")
        self._by_identity: dict[int, AgentLike] = {id(a): a for a in self.agents.values()}
        if router is None:
            if len(self.agents) != 1:
                raise ConfigurationError(
                    f"network {name!r} has {len(self.agents)} agents and no router"
                )
            router = _run_once(next(iter(self.agents.values())))
        if not callable(router):
            raise ConfigurationError(f"network {name!r}: router {router!r} is not callable")
        check_number(f"network {name!r}: max_iter", max_iter, integer=True, minimum=1)
        self.router: Router[DepsT] = router
        self.resources = check_factories(f"network {name!r}", resources)
        self.default_model = default_model
        self.max_iter = max_iter
        self.context_policy = context_policy
        self.schema = StateSchema.coerce(state_schema)
        check_tool_defaults(f"network {name!r}", tool_timeout, tool_retry)
        self.tool_timeout = tool_timeout
        self.tool_retry = tool_retry
        self.limits = _check_limits(name, limits)
        self.telemetry = telemetry
        self.predict_state: dict[str, dict[str, Any]] = {}
        if predict_state:
            self.predict_state = check_predict_state(self, predict_state)
        validate = getattr(router, "validate", None)
        if callable(validate):
            validate(self)

    # -- routing ---------------------------------------------------------------------------

    def resolve(self, choice: Any) -> list[AgentLike]:
        """The agents a router's answer names, or `RoutingError` naming the unknown one."""
        agent = self._by_identity.get(id(choice))
        if agent is not None:
            return [agent]
        if isinstance(choice, str) or not isinstance(choice, Sequence):
            return [self._one(choice)]
        return [self._one(item) for item in choice]

    def _one(self, item: Any) -> AgentLike:
        agent = self._by_identity.get(id(item))
        if agent is not None:
            return agent
        if isinstance(item, Parallel):  # a fan-out: queued whole, its agents resolved here
            return item.bind(self._one)  # type: ignore[return-value]
        if isinstance(item, str):
            agent = self.agents.get(item)
            if agent is None:
                raise RoutingError(
                    f"router chose agent {item!r}, which is not in network {self.name!r} "
                    f"(agents: {', '.join(self.agents)})",
                    agent=item,
                )
            return agent
        name = getattr(item, "name", None)
        agent = self.agents.get(name) if isinstance(name, str) else None
        if agent is None:
            raise RoutingError(
                f"router chose agent {name or item!r}, which is not in network {self.name!r} "
                f"(agents: {', '.join(self.agents)})",
                agent=name if isinstance(name, str) else repr(item),
            )
        if id(agent) != id(item):  # not `is`: mypy would narrow `agent` to Any
            raise RoutingError(
                f"router chose an agent named {name!r} that is not the one in network "
                f"{self.name!r}",
                agent=name,
            )
        return agent

    # -- running ---------------------------------------------------------------------------

    def new_state(self, data: Mapping[str, Any] | State | None = None) -> State:
        """A fresh State for one run: the schema's defaults plus a deep copy of `data`."""
        if isinstance(data, State):
            data = data.kv.data
        return State(data, schema=self.schema)

    async def run(
        self,
        input: str,
        *,
        state: Mapping[str, Any] | State | None = None,
        max_iter: int | None = None,
        run_id: str | None = None,
        sinks: Sequence[AnySink] = (),
        thread_id: str | None = None,
        user_id: str | None = None,
        store: Any = None,
        app_name: str | None = None,
        deps: DepsT | None = None,
        resources: Mapping[str, ResourceFactory] | None = None,
        limits: UsageLimits | None = None,
        durable: bool = False,
        step_runner: StepRunner | None = None,
    ) -> RunResult:
        """Run the network on `input` and return its `RunResult`.

        `deps` is any object the run's tools, routers, hooks and instruction functions reach as
        `ctx.deps`, as given: never copied, persisted, streamed, templated or logged (state is
        for data; deps for live things). `resources` adds `{name: factory}` to the network's
        own for this run (see `network.run.resources`).

        `limits` caps what the run may spend (`UsageLimits`; default: the network's): a run
        that reaches one stops with `StopReason.USAGE_LIMIT` and `result.limit_exceeded`.

        `state` seeds the run's fresh State (validated by the schema, deep-copied). Any error
        raised inside the run carries the partial result as `error.partial_result`.

        With a `thread_id`, the run continues that thread (see `network.threads`): its history
        and `user_id`'s / `app_name`'s (default: this network's name) scoped state are loaded
        from `store` (a store, a URL, an SQLite path; default `agent-network.db`), and each
        completed agent call is committed. Without one, nothing is written anywhere.

        `durable=True` runs it as a DBOS workflow (the `durable` extra; see
        `network.durable`): each router decision, model call and tool call is recorded, and a
        run whose process dies resumes from its last completed step. `run_id` is then the
        workflow's id: the id of a finished run returns its recorded outcome without running
        anything. `store` must be a URL or path. `step_runner` is the durable engine's own
        hook: leave it None.
        """
        checked = _check_limits(self.name, limits)  # before anything changes or is recorded
        if durable:
            from network.durable.runs import run_durably  # noqa: PLC0415 (dbos is optional and heavy)

            durable_result: RunResult = await run_durably(
                self,
                input,
                state=state,
                max_iter=max_iter,
                run_id=run_id,
                sinks=sinks,
                thread_id=thread_id,
                user_id=user_id,
                store=store,
                app_name=app_name,
                deps=deps,
                resources=resources,
                limits=checked,
            )
            return durable_result
        session = None
        if thread_id is not None:
            session = await _open_session(
                self,
                thread_id,
                user_id=user_id,
                store=store,
                app_name=app_name,
                state=state,
                steps=step_runner,
            )
        elif store is not None or user_id is not None:
            raise ConfigurationError("store= and user_id= only apply to a run with a thread_id")
        run_state = self.new_state(state) if session is None else session.state
        ctx: RunContext[DepsT] = RunContext(
            network=self,
            state=run_state,
            input=input,
            run_id=run_id or new_id("run_"),
            thread_id=thread_id,
            deps=deps,  # type: ignore[arg-type]  # None when the run has no deps
            resources=self._resources("run", resources),
            steps=step_runner,
        )
        run_state.append_messages([UserMessage(input)])
        return await self._start(ctx, session, sinks, max_iter, checked)

    def enqueue(
        self,
        input: str,
        *,
        db: str,
        state: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        max_iter: int | None = None,
        thread_id: str | None = None,
        user_id: str | None = None,
        app_name: str | None = None,
        store: str | None = None,
    ) -> str:
        """Put a durable run of this network on the workers' queue in `db`; returns its run id.

        Nothing runs here: an `agent-network worker` on the same database runs it. Read its
        status, result and events by run id with `network.durable.DurableClient(db)`.
        """
        from network.durable.client import DurableClient  # noqa: PLC0415 (dbos is optional and heavy)

        client = DurableClient(db)
        try:
            return client.enqueue(
                self.name,
                input,
                state=state,
                run_id=run_id,
                max_iter=max_iter,
                thread_id=thread_id,
                user_id=user_id,
                app_name=app_name,
                store=store,
            )
        finally:
            client.close()

    async def execute(
        self, ctx: RunContext, *, max_iter: int | None = None, sinks: Sequence[AnySink] = ()
    ) -> RunResult:
        """Drive the loop for a prepared context, with its event sinks (the extension point).

        The engine (`network.run.engine.execute`) does the work; this is its address on the
        network. The network's resources join the context's own (which win a name); the
        network adds its usage limits and its telemetry sink.
        """
        ctx.resources.add_defaults(self.resources)
        return await engine.execute(ctx, max_iter=max_iter, sinks=self._observe(ctx, sinks))

    def _start(
        self,
        ctx: RunContext,
        session: ThreadSession | None,
        sinks: Sequence[AnySink],
        max_iter: int | None,
        limits: UsageLimits | None,
    ) -> Awaitable[RunResult]:
        """Execute a prepared run (`run`, `resume`, `answer_tool_calls`): its limits (the
        run's own over the network's) and telemetry set, on its thread session when it has one.

        Not a coroutine: it hands back the execution's own, so that a run's steps do not
        resume through one more frame each."""
        if limits is not None:
            ctx.budget = Budget(limits)
        observed = self._observe(ctx, sinks)
        if session is not None:
            return session.execute(ctx, max_iter=max_iter, sinks=observed)
        return engine.execute(ctx, max_iter=max_iter, sinks=observed)

    def _observe(self, ctx: RunContext, sinks: Sequence[AnySink]) -> list[AnySink]:
        """The network's default limits, and the telemetry sink when the run is traced.

        The sink starts the run's root span here, before RUN_STARTED, which carries its ids.
        """
        if ctx.budget is None and self.limits is not None:
            ctx.budget = Budget(self.limits)
        spans = run_spans(ctx)
        # kept when the caller asked for them (the AG-UI server reports usage per model)
        ctx.record_model_calls = (
            ctx.record_model_calls or spans is not None or ctx.budget is not None
        )
        return [*sinks, spans] if spans is not None else list(sinks)

    def _resources(self, owner: str, factories: Mapping[str, Any] | None) -> Resources:
        """A run's resources: its own factories over the network's."""
        resources = Resources(check_factories(owner, factories))
        resources.add_defaults(self.resources)
        return resources

    def run_sync(self, input: str, **kwargs: Any) -> RunResult:
        """`run` for synchronous callers (wraps it in `anyio.run`).

        Inside a running event loop (a notebook, an async app) use `await network.run(...)`.
        """
        refuse_inside_loop(f"network {self.name!r}")

        async def main() -> RunResult:
            return await self.run(input, **kwargs)

        return anyio.run(main)

    def stream(self, input: str, **kwargs: Any) -> EventStream:
        """Run the network and yield its AG-UI events (`ag_ui.core` models) as they happen.

        Takes `run`'s arguments. The events end with RUN_FINISHED, or with RUN_ERROR after
        which the run's exception is raised. Use `async with network.stream(...) as events:`
        when you may stop reading early: leaving the block cancels the run at once. The
        `RunResult` is on `events.result` once the run finished.
        """

        extra = list(kwargs.pop("sinks", ()))
        return EventStream(lambda sink: self.run(input, sinks=[sink, *extra], **kwargs))

    async def resume(
        self,
        interrupted: RunResult,
        answers: Any,
        *,
        sinks: Sequence[AnySink] = (),
        max_iter: int | None = None,
        run_id: str | None = None,
        store: Any = None,
        user_id: str | None = None,
        app_name: str | None = None,
        deps: DepsT | None = None,
        resources: Mapping[str, ResourceFactory] | None = None,
        limits: UsageLimits | None = None,
        durable: bool = False,
        step_runner: StepRunner | None = None,
    ) -> RunResult:
        """Continue a run that stopped on interrupts (`interrupted.interrupts`).

        `answers`: `interrupt.accept()` / `interrupt.reject(reason)` for every pending interrupt
        (or `{interrupt_id: bool}`). Takes `sinks=`, `max_iter=` and `limits=` like `run`. A
        run that was saved to a thread (`interrupted.persisted`) is resumed on that thread,
        reopened from `store=` (the same default as `run`; `user_id=` / `app_name=` as there):
        the held call never ran and proposals are never applied on the server, so the stored
        state is the checkpoint. See `network.run.interrupts` for what accepting and rejecting do.
        `deps=` and `resources=` are `run`'s: deps are not kept from the interrupted run (they
        were never stored), and resources are opened afresh from their factories.

        `durable=True` runs the resumed part as a DBOS workflow of its own, with `run_id` as
        its id (see `network.durable`; `store` must then be a URL or path). `step_runner` is
        the durable engine's own hook: leave it None.
        """
        answered = pending_answers(interrupted, answers)
        checked = _check_limits(self.name, limits)  # before anything changes or is recorded
        if durable:
            from network.durable.runs import continue_durably  # noqa: PLC0415 (dbos)

            continued: RunResult = await continue_durably(
                self,
                "resume",
                interrupted,
                [answer for _, answer in answered],
                sinks=sinks,
                max_iter=max_iter,
                run_id=run_id,
                store=store,
                user_id=user_id,
                app_name=app_name,
                deps=deps,
                resources=resources,
                limits=checked,
            )
            return continued
        old = interrupted.state
        session, state = await self._reopen(
            interrupted,
            user_id,
            store,
            app_name,
            lambda data: restore_rejected(data, answered),
            steps=step_runner,
        )
        ctx = RunContext(
            network=self,
            state=state,
            input=old.results[0].input if old.results else "",
            run_id=run_id or new_id("run_"),
            thread_id=interrupted.thread_id,
            resume=answered,
            deps=deps,
            resources=self._resources("resume", resources),
            steps=step_runner,
        )
        if interrupted.trace_id is not None and interrupted.span_id is not None:
            ctx.trace_links = ((interrupted.trace_id, interrupted.span_id),)  # its trace
        return await self._start(ctx, session, sinks, max_iter, checked)

    async def answer_tool_calls(
        self,
        stopped: RunResult,
        results: Mapping[str, Any],
        *,
        sinks: Sequence[AnySink] = (),
        max_iter: int | None = None,
        run_id: str | None = None,
        store: Any = None,
        user_id: str | None = None,
        app_name: str | None = None,
        deps: DepsT | None = None,
        resources: Mapping[str, ResourceFactory] | None = None,
        limits: UsageLimits | None = None,
        durable: bool = False,
        step_runner: StepRunner | None = None,
    ) -> RunResult:
        """Continue a run that stopped on client tool calls (`stopped.pending_tool_calls`).

        `results`: `{tool_call_id: result}` for every pending call. Takes `run`'s `sinks=`,
        `max_iter=`, `deps=`, `resources=` and `limits=` (default: the network's); a run saved
        to a thread continues on it, reopened from `store=` (as for `resume`). See
        `network.run.client_results`. `durable=True` and `step_runner` are `resume`'s.
        """
        messages = result_messages(stopped, results)
        checked = _check_limits(self.name, limits)  # before anything changes
        if durable:
            from network.durable.runs import continue_durably  # noqa: PLC0415 (dbos)

            continued: RunResult = await continue_durably(
                self,
                "answer_tool_calls",
                stopped,
                {message.tool_call_id: message.content for message in messages},
                sinks=sinks,
                max_iter=max_iter,
                run_id=run_id,
                store=store,
                user_id=user_id,
                app_name=app_name,
                deps=deps,
                resources=resources,
                limits=checked,
            )
            return continued
        old = stopped.state
        session, state = await self._reopen(stopped, user_id, store, app_name, steps=step_runner)
        state.append_messages(messages)
        ctx = RunContext(
            network=self,
            state=state,
            input=old.results[0].input if old.results else "",
            run_id=run_id or new_id("run_"),
            thread_id=stopped.thread_id,
            deps=deps,
            resources=self._resources("answer_tool_calls", resources),
            steps=step_runner,
        )
        return await self._start(ctx, session, sinks, max_iter, checked)

    async def _reopen(
        self,
        stopped: RunResult,
        user_id: str | None,
        store: Any,
        app_name: str | None,
        adjust: Callable[[dict[str, Any]], None] | None = None,
        *,
        steps: StepRunner | None = None,
    ) -> tuple[ThreadSession | None, State]:
        """The state a run continues from: its thread reopened when it was saved to one,
        else a copy of its final state (`adjust` may change that copy's data first)."""
        if stopped.persisted and stopped.thread_id is not None:
            session = await _open_session(
                self,
                stopped.thread_id,
                user_id=user_id,
                store=store,
                app_name=app_name,
                steps=steps,
            )
            return session, session.state
        data = stopped.state.snapshot()
        if adjust is not None:
            adjust(data)
        return None, State(data, schema=self.schema, messages=list(stopped.state.messages))

    async def fork(
        self,
        thread_id: str,
        *,
        at: int | Checkpoint,
        update: Mapping[str, Any] | None = None,
        new_thread_id: str | None = None,
        user_id: str | None = None,
        store: Any = None,
        metadata: dict[str, Any] | None = None,
    ) -> ForkResult:
        """Make a new thread from `thread_id` as it was at checkpoint `at` (an agent call's
        index, negative from the end, or a `Checkpoint`), plus `update` (thread keys, validated
        through the schema). It records its parent; the next run on it continues from there
        with the conversation; the source is unchanged. `user:` / `app:` keys keep their current
        values, and the result lists those written after the checkpoint. See docs/threads.md.
        """
        from network.threads import time_travel  # noqa: PLC0415 (thread stores load on use)

        return await time_travel.fork(
            self,
            thread_id,
            at=at,
            update=update,
            new_thread_id=new_thread_id,
            user_id=user_id,
            store=store,
            metadata=metadata,
        )

    async def rewind(
        self,
        thread_id: str,
        *,
        to: int | Checkpoint,
        kept_as: str | None = None,
        user_id: str | None = None,
        store: Any = None,
    ) -> RewindReport:
        """Move `thread_id` back, in place, to checkpoint `to`. The thread as it was is kept
        whole as the thread `kept_as` (named in the report); the report lists the tool calls
        after the checkpoint, whose side effects were not undone, and the `user:` / `app:`
        keys written after it. See docs/threads.md.
        """
        from network.threads import time_travel  # noqa: PLC0415 (thread stores load on use)

        return await time_travel.rewind(
            self, thread_id, to=to, kept_as=kept_as, user_id=user_id, store=store
        )

    def __repr__(self) -> str:
        return f"Network({self.name!r}, agents={list(self.agents)})"


def refuse_inside_loop(what: str) -> None:
    """`ConfigurationError` when called from a thread whose event loop is running."""
    # Read from sys.modules, not imported: a loop cannot be running before asyncio is loaded,
    # and importing it here would put asyncio (with ssl and socket) on `import network`.
    running_asyncio = sys.modules.get("asyncio")
    if running_asyncio is None:
        return
    try:
        running_asyncio.get_running_loop()
    except RuntimeError:
        return
    raise ConfigurationError(
        f"{what}: run_sync cannot run inside a running event loop (a notebook, an async "
        "function); use `await network.run(...)` there instead"
    )


def _check_limits(network: str, limits: Any) -> UsageLimits | None:
    if limits is None or isinstance(limits, UsageLimits):
        return limits
    raise ConfigurationError(f"network {network!r}: limits must be UsageLimits, got {limits!r}")


def _run_once(agent: AgentLike) -> Router:
    def once(ctx: RunContext) -> Any:
        return agent if ctx.call_count == 0 else None

    return once


async def _open_session(network: Network[Any], thread_id: str, **options: Any) -> ThreadSession:
    """Open a run's thread. Thread stores, their codec and records load with the first run
    on a thread, not with `import network`."""
    from network.threads.session import ThreadSession  # noqa: PLC0415 (see the docstring)

    return await ThreadSession.open(network, thread_id, **options)
