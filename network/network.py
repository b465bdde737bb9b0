"""`Network`: a team of agents, a router that picks who runs next, and a state schema.

A Network is a definition: running it never changes it. Each run gets a fresh `State` built
from the schema and a deep copy of the initial data.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, NoReturn, Unpack

from network import kernel
from network.capabilities.budgets import Metering
from network.capabilities.client_tools import ClientTools
from network.capabilities.guardrails import Guardrails
from network.capabilities.predictive import PredictiveState
from network.capabilities.progress import StateProgress
from network.capabilities.view import ConversationView
from network.deprecation import positional_arguments
from network.errors import ConfigurationError, RoutingError
from network.history.model_option import checked_model
from network.numbers import check_number
from network.run.budgets.shared import SharedBudget, coerce_budgets
from network.run.capability import Capability, checked_capabilities
from network.run.context import AgentLike, DepsT, Router, RunContext, RunStages
from network.run.emitter import Sink
from network.run.entry_points import blocking, refuse_inside_loop, streaming
from network.run.guardrails import coerce_guardrails
from network.run.handoff_router import FollowHandoffs
from network.run.inputs import RunInput, check_text_input
from network.run.limits import UsageFigures, UsageLimits
from network.run.max_iter import check_max_iter
from network.run.options import RunOptions
from network.run.parallel import Parallel
from network.run.predictive_config import check_predict_state
from network.run.resources import ResourceFactory, check_factories
from network.run.result import RunResult
from network.run.retry_policy import RetryPolicy
from network.run.router_check import checked_router
from network.run.stages import run_stages
from network.run.subrun import SubrunTool, check_mapping
from network.run.thread_ref import ThreadKeywords, ThreadRef, thread_of
from network.run.tool_defaults import check_tool_defaults
from network.run.tool_names import default_tool_name
from network.state.output_keys import declare_output_keys
from network.state.schema import StateSchema, storable_key
from network.state.state import State
from network.telemetry.options import Telemetry

if TYPE_CHECKING:
    from network.capabilities.replay import ReplayReport
    from network.threads.checkpoint_data import Checkpoint, ForkResult, RewindReport

__all__ = ["DEFAULT_MAX_ITER", "Network", "refuse_inside_loop"]

DEFAULT_MAX_ITER = 100


class Network(Generic[DepsT]):
    """A team of agents run by a router over one shared state.

    Args:
        name: the network's name (logs, traces, AG-UI).
        agents: the agents; names must be unique.
        router: `router(ctx)` returning the next agent(s), an agent name, a `Stop`, or None to
            finish (a handoff the last call made is then followed: see `agents.handoff`).
            Optional for a one-agent network, which then runs its agent once, and for a
            network whose agents hand off (`Agent(handoffs=...)`): the first agent starts a
            conversation, handoffs are followed, and the run ends at an answer without tool
            calls (`network.run.handoff_router`).
        default_model: the model of every agent that names none: what `Agent(model=...)`
            takes (a litellm model string such as `"openai/gpt-4o-mini"`, a dict of
            `make_model` arguments, or a `Model` object); anything else is refused.
        max_iter: the most agent calls one run may make (default 100).
        state_schema: a Haystack-style dict, a pydantic model class, or a `StateSchema`.
        predict_state: `{state_key: {"tool": name, "tool_argument": argument}}`: the key is
            streamed from that tool's partial JSON arguments while the model writes them,
            before the tool runs (without `tool_argument`: the whole arguments object);
            AG-UI's predictive state, see docs/agui.md.
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
        budget: the default `SharedBudget` (or list of them) of every run: a ledger on the
            store that each model request reserves on before it is sent (a run's `budget=`
            replaces it); see docs/budgets.md.
        telemetry: OpenTelemetry options (`network.Telemetry`); runs are traced
            whenever the application configured an OpenTelemetry SDK, without them too.
        input_guardrails: guardrails on the input of every run's entry agent (the first
            agent call of a run on a new message), beside the agent's own; see
            docs/guardrails.md.
        output_guardrails: guardrails on every agent's final answer (a text answer, or a
            typed value, that calls no tools: each one may be the run's output), checked
            before it is committed.
        capabilities: more `Capability` objects for every run, after those the keywords
            above build and the agents bring (see docs/capabilities.md).
        view: what each agent's requests send of the conversation, unless the agent sets its
            own `view`: "all" (other agents' turns shown as context, never as the agent's own
            assistant turns; the default of a network of several agents), "input" (only this
            run's input and the agent's own turns) or `fn(ctx, messages) -> messages`; see
            `network.capabilities.view`.
    """

    def __init__(
        self,
        name: str,
        *positional: Any,
        agents: Sequence[AgentLike] = (),
        router: Router[DepsT] | None = None,
        default_model: Any = None,
        max_iter: int = DEFAULT_MAX_ITER,
        state_schema: Any = None,
        predict_state: Mapping[str, Mapping[str, str]] | None = None,
        resources: Mapping[str, ResourceFactory] | None = None,
        deps_type: type[DepsT] | None = None,
        context_policy: Any = None,
        tool_timeout: float | None = None,
        limits: UsageLimits | None = None,
        budget: SharedBudget | Sequence[SharedBudget] | None = None,
        telemetry: Telemetry | None = None,
        tool_retry: RetryPolicy | None = None,
        input_guardrails: Sequence[Any] = (),
        output_guardrails: Sequence[Any] = (),
        capabilities: Sequence[Capability] = (),
        view: Any = None,
    ) -> None:
        if positional:  # the old spelling, `Network(name, agents, router, model, max_iter)`
            agents, router, default_model, max_iter = _positional(
                name, positional, agents, router, default_model, max_iter
            )
        if not name or not isinstance(name, str):
            raise ConfigurationError(f"a network needs a name, got {name!r}")
        self.name = name
        self.agents: dict[str, AgentLike] = _agents_by_name(name, agents)
        self._by_identity: dict[int, AgentLike] = {id(a): a for a in self.agents.values()}
        self.handoff_edges = _handoff_edges(self.agents)
        self.router = _router_of(name, self.agents, router, self.handoff_edges)
        check_max_iter(
            f"network {name!r}: max_iter",
            max_iter,
            hint=f"leave it out for the default ({DEFAULT_MAX_ITER})",
        )
        self.resources = check_factories(f"network {name!r}", resources)
        self.default_model = default_model  # checked by its setter
        self.max_iter = max_iter
        self.context_policy = context_policy
        # an agent's typed answer makes its undeclared `output_key` a key of that type
        schema = StateSchema.coerce(state_schema)
        self.schema = declare_output_keys(name, schema, self.agents.values())
        check_tool_defaults(f"network {name!r}", tool_timeout, tool_retry)
        self.tool_timeout = tool_timeout
        self.tool_retry = tool_retry
        self.limits = _check_limits(name, limits)
        self.budget = coerce_budgets(name, budget)
        self.telemetry = _check_telemetry(name, telemetry)
        self.input_guardrails = coerce_guardrails(f"network {name!r}", "input", input_guardrails)
        self.output_guardrails = coerce_guardrails(f"network {name!r}", "output", output_guardrails)
        # several agents: each sees the others' turns as context
        self.view = "all" if view is None and len(self.agents) > 1 else view
        self.predict_state = check_predict_state(self, predict_state) if predict_state else {}
        self.capabilities = self._capabilities(capabilities)
        self._run_stages = run_stages(self.capabilities)
        self._live_stages: RunStages | None = None
        validate = getattr(self.router, "validate", None)
        if callable(validate):
            validate(self)

    @property
    def router(self) -> Router[DepsT]:
        """`router(ctx)`: who runs next (see the class's `router`)."""
        return self._router

    @router.setter
    def router(self, router: Router[DepsT]) -> None:
        # checked when set, as when given: one that cannot be called as router(ctx) used to
        # fail at the run's first routing decision
        self._router = checked_router(self.name, router)

    @property
    def default_model(self) -> Any:
        """The model of every agent that names none (see the class's `default_model`)."""
        return self._default_model

    @default_model.setter
    def default_model(self, model: Any) -> None:
        # checked when set, as when given to the constructor: a wrong value used to be taken
        # here and fail at the first call with a TypeError from deep in the run
        self._default_model = checked_model(f"network {self.name!r}", "default_model", model)

    def _capabilities(self, given: Sequence[Capability]) -> tuple[Capability, ...]:
        """The network's capabilities: those its keywords build (guardrails, the context
        policy, predictive state), those its agents bring (`Capability.for_network`), then
        `capabilities=`, in the order their stages run (`network.run.capability`)."""
        where = f"network {self.name!r}"
        built: list[Capability] = []
        if self.input_guardrails or self.output_guardrails:
            built.append(Guardrails(self.input_guardrails, self.output_guardrails, entry=True))
        if self.context_policy is not None:
            if not isinstance(self.context_policy, Capability):
                raise ConfigurationError(
                    f"{where}: context_policy must be a ContextPolicy, got {self.context_policy!r}"
                )
            built.append(self.context_policy)
        if self.predict_state:
            built.append(PredictiveState(self.predict_state))
        if self.view is not None:
            built.append(ConversationView(self.view, where=where))
        for agent in self.agents.values():
            for capability in getattr(agent, "capabilities", ()):
                brought = capability.for_network()
                if brought is not None and not any(brought is known for known in built):
                    built.append(brought)
        return checked_capabilities(where, given, built)

    def with_capabilities(self, *capabilities: Capability) -> Network[DepsT]:
        """This network with `capabilities` added after its own, for every agent: a copy
        sharing the agents, router and options (this network is not changed). A replay runs
        on one (`replay`)."""
        derived = copy.copy(self)
        for capability in capabilities:
            if not isinstance(capability, Capability):
                raise ConfigurationError(
                    f"network {self.name!r}: {capability!r} is not a Capability"
                )
        derived.capabilities = (*self.capabilities, *capabilities)
        derived._run_stages = run_stages(derived.capabilities)
        derived._live_stages = None
        return derived

    def run_stages_for(self, ctx: RunContext, *, metered: bool, live: bool = False) -> RunStages:
        """The run stages of run `ctx`: the network's capabilities, after the run's own when
        it has some: the tools its caller declared for it (an AG-UI client's), `metered` or
        when it reserves on shared budgets already, their metering, `live` (a sink reads
        the run as it happens) a running tool's state writes shown as it waits, and those its
        caller added (`ctx.engine.capabilities`: a server's)."""
        added = ctx.engine.capabilities
        if not (ctx.engine.client_tools or metered or ctx.engine.budget_accounts or added):
            if not live:
                return self._run_stages
            if self._live_stages is None:  # one tuple for every live run: agents cache it
                self._live_stages = run_stages((StateProgress(), *self.capabilities))
            return self._live_stages
        extra: list[Capability] = []
        if live:
            extra.append(StateProgress())
        if ctx.engine.client_tools:
            extra.append(ClientTools(ctx.engine.client_tools, offered=True))
        if metered or ctx.engine.budget_accounts:
            extra.append(Metering())
        return run_stages((*extra, *added, *self.capabilities))

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
            return item.bind(self._branch)  # type: ignore[return-value]
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

    def _branch(self, item: Any) -> Any:
        """A fan-out's branch resolved: one of this network's agents, or a network as it is
        (it runs its own router and agents on the branch: `network.run.branch_run`)."""
        return item if isinstance(item, Network) else self._one(item)

    # -- running ---------------------------------------------------------------------------

    def new_state(self, data: Mapping[str, Any] | State | None = None) -> State:
        """A fresh State for one run: the schema's defaults plus a deep copy of `data`.

        A `State` given whole carries its conversation and agent calls over too (copied): a
        run given one continues from them (see `run`'s `state=`).
        """
        if isinstance(data, State):
            return data.copy_for(self.schema)
        return State(data, schema=self.schema)

    async def run(
        self,
        input: RunInput,
        *,
        thread: ThreadRef | str | None = None,
        state: Mapping[str, Any] | State | None = None,
        deps: DepsT | None = None,
        resources: Mapping[str, ResourceFactory] | None = None,
        limits: UsageLimits | None = None,
        usage: UsageFigures | None = None,
        budget: SharedBudget | Sequence[SharedBudget] | None = None,
        max_iter: int | None = None,
        run_id: str | None = None,
        sinks: Sequence[Sink] = (),
        durable: bool = False,
        **deprecated: Unpack[ThreadKeywords],
    ) -> RunResult:
        """Run the network and return its `RunResult`: the one way into a run.

        `input` is the user's message (`""`: none, the conversation is left as it is, for a
        run that only writes `state=` or lets the router act), or the continuation of a run
        that stopped:
        `Resume(answers)` for interrupts waiting for a person's confirmation,
        `ToolResults(results)` for client tool calls (`result.resume(...)` and
        `result.tool_results(...)` build them; see `network.run.inputs`). `run_sync` and
        `stream` take exactly these arguments.

        Args:
            thread: the stored thread the run continues (a `ThreadRef`, or a bare id on the
                default store): its history and scoped state are loaded, and each completed
                agent call is committed. None: nothing is written anywhere.
            state: seeds the run's fresh State (validated, deep-copied); a `State` given
                whole brings its conversation and agent calls (not on a thread: it has its own).
            deps: any object the run's tools, routers, hooks and instructions reach as
                `ctx.deps`, as given: never copied, persisted, streamed or logged.
            resources: `{name: factory}` added to the network's own (`network.run.resources`).
            limits: what the run may spend (`UsageLimits`; default: the network's); a run
                that reaches one stops with `StopReason.USAGE_LIMIT`.
            usage: `UsageFigures` carried across runs: what earlier runs given it spent; the
                run adds its own as it goes, and its limits count the total.
            budget: a `SharedBudget` (or a list): a ledger on the store each model request
                reserves on before it is sent (`BudgetExceeded` when it does not fit; default:
                the network's).
            max_iter: the most agent calls this run may make (default: the network's).
            run_id: the run's id (default: a new one).
            sinks: event sinks (`async def sink(event)`), given every AG-UI event.
            durable: run it as a DBOS workflow (`network.durable`): each step is recorded, and
                a run whose process dies resumes from its last completed step; `run_id` is the
                workflow's id, and the thread's store must be a URL or a path.
            **deprecated: `thread_id=`, `user_id=`, `app_name=`, `store=`: the old spelling
                of `thread=ThreadRef(...)`, kept for one release with a `DeprecationWarning`.

        Any error raised inside the run carries the partial result as `error.partial_result`.
        """
        options = _run_options(  # checked before anything runs; positional (not `locals()`)
            self.name, input, thread, deprecated, state, deps, resources, limits, usage, budget,
            max_iter, run_id, sinks, durable)  # fmt: skip
        if durable:  # the durable engine's workflow carries it out through the kernel
            from network.durable.runs import run_durably  # noqa: PLC0415 (dbos is optional and heavy)

            return await run_durably(self, input, options)  # type: ignore[no-any-return]
        return await kernel.run(self, input, options)

    run_sync = blocking(run)
    stream = streaming(run)

    def enqueue(
        self,
        input: str,
        *,
        db: str,
        thread: ThreadRef | str | None = None,
        state: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        max_iter: int | None = None,
        **deprecated: Unpack[ThreadKeywords],
    ) -> str:
        """Put a durable run of this network on its queue in `db`; returns its run id.

        Nothing runs here: an `agent-network worker` of this network on the same database
        runs it (until one runs, the run waits). Read its status, result and events by run
        id with `network.durable.DurableClient(db)`.
        `thread=` is `run`'s (its store must be a URL or a path). `state=` is checked against
        this network's schema first, as `run` checks it (`DurableClient.enqueue`, which has
        only a network's name, leaves that to the worker).
        """
        from network.durable.client import DurableClient, enqueued_run  # noqa: PLC0415 (dbos is optional and heavy)

        ref = thread_of(thread, deprecated, where="enqueue")
        if state is not None:
            # this network's schema is at hand here (the client has only its name): a value
            # its worker would refuse is refused now, naming the key, before anything is queued
            self.new_state(state)
        asked: dict[str, Any] = {
            "state": state,
            "max_iter": max_iter,
            "thread_id": None if ref is None else ref.id,
            "user_id": None if ref is None else ref.user_id,
            "app_name": None if ref is None else ref.app_name,
            "store": None if ref is None else ref.store,
        }
        # Checked before the client opens the database (and creates it when missing).
        run_id, _ = enqueued_run(self.name, input, run_id=run_id, **asked)
        client = DurableClient(db)
        try:
            return client.enqueue(self.name, input, run_id=run_id, **asked)
        finally:
            client.close()

    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        state_in: Mapping[str, str] | None = None,
        state_out: Mapping[str, str] | None = None,
        max_iter: int | None = None,
        limits: UsageLimits | None = None,
        output_extractor: Any = None,
        on_failure: str = "tell_model",
    ) -> SubrunTool:
        """This network as a tool of an agent (a supervisor): give the result to
        `Agent(tools=[...])`. A call runs the network, with the call's input as its message,
        as a sub-run of the caller's run: its state is its own (`state_in` / `state_out` map
        keys in and out), its spending counts in the caller's usage and limits, its trace nests
        under the tool's span, its events stream attributed to it (AG-UI SUBAGENT_*), and a
        confirmation it waits for stops the caller's run until answered. See
        docs/subagents.md.

        Args:
            name: the tool's name (default: the network's name): 1 to 64 letters, digits,
                `_` or `-`, the names model providers accept (`network.run.tool_names`).
            description: what the supervisor's model reads about it.
            state_in: `{inner_key: outer_key}`: keys copied from the caller's state.
            state_out: `{outer_key: inner_key}`: keys copied back when it finishes.
            max_iter: the most agent calls one call of it may make (default: the network's).
            limits: `UsageLimits` of its own (default: the network's), on top of the caller's.
            output_extractor: `fn(result) -> value`: the tool's result, from the sub-run's
                `RunResult` (default: its last agent's typed output, else its final text).
            on_failure: "tell_model" (default: a failed sub-run is an error result the model
                reads) or "raise" (it fails the caller's run with a `ToolError`).
        """
        label = f"network {self.name!r}"
        # the network's own name is any string: the tool's, given or taken from it, is checked
        default_tool_name(label, name, self.name)
        return SubrunTool(
            name=name or self.name,
            description=description
            if description is not None
            else f"Ask {self.name} to do a task.",
            network_of=lambda _parent: self,
            label=label,
            state_in=check_mapping(label, "state_in", state_in),
            state_out=check_mapping(label, "state_out", state_out),
            max_iter=max_iter,
            limits=limits,
            output_extractor=output_extractor,
            on_failure=on_failure,
            agents=self.agents,
        )

    async def add_messages(self, thread: ThreadRef | str, messages: Sequence[Any]) -> int:
        """Append `messages` to the stored thread's conversation, as one commit; returns the
        thread's new revision.

        For the application's own words in a conversation: after a run that stopped on a
        guardrail (`stop_reason == "guardrail"`), the refusal the user reads, so the next turn
        does not send two user messages in a row. `messages` are `UserMessage` /
        `AssistantMessage` objects or dicts (`{"role": "assistant", "content": "..."}`), text
        only; anything else is a `MessageError` naming the message and the field, and nothing
        is written. The thread must exist (`ThreadNotFoundError`). See docs/guardrails.md.
        """
        from network.threads.added_messages import add_messages  # noqa: PLC0415 (thread stores load on use)

        return await add_messages(self, thread, messages)

    async def fork(
        self,
        thread: ThreadRef | str,
        *,
        at: int | Checkpoint,
        update: Mapping[str, Any] | None = None,
        new_thread_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ForkResult:
        """Make a new thread from `thread` as it was at checkpoint `at` (an agent call's
        index, negative from the end, or a `Checkpoint`), plus `update` (thread keys, validated
        through the schema). It records its parent; the next run on it continues from there
        with the conversation; the source is unchanged. `user:` / `app:` keys keep their current
        values, and the result lists those written after the checkpoint. See docs/threads.md.

        Args:
            thread: the thread to fork, as `run` takes it (a `ThreadRef`: its id, its user,
                which must own it when given, its app and its store; or a bare id on the
                default store). The fork has the source's user and app, on the same store.
            at: the checkpoint.
            update: thread keys to set on the fork, validated through the schema.
            new_thread_id: the fork's id (default: `<source>~fork-<random>`).
            metadata: the fork's metadata (default: the source's): a mapping of names to plain
                JSON, else a `ConfigurationError` naming the entry, before anything is read.
        """
        from network.threads import time_travel  # noqa: PLC0415 (thread stores load on use)

        return await time_travel.fork(
            self,
            _thread_of("fork", thread),
            at=at,
            update=update,
            new_thread_id=new_thread_id,
            metadata=metadata,
        )

    async def rewind(
        self,
        thread: ThreadRef | str,
        *,
        to: int | Checkpoint,
        kept_as: str | None = None,
    ) -> RewindReport:
        """Move `thread` back, in place, to checkpoint `to`. The thread as it was is kept
        whole as the thread `kept_as` (named in the report); the report lists the tool calls
        after the checkpoint, whose side effects were not undone, and the `user:` / `app:`
        keys written after it. See docs/threads.md.

        Args:
            thread: the thread to rewind, as `run` takes it (a `ThreadRef`, or a bare id on
                the default store).
            to: the checkpoint.
            kept_as: the id of the thread keeping it as it was (default:
                `<thread>~rewound-<random>`).
        """
        from network.threads import time_travel  # noqa: PLC0415 (thread stores load on use)

        return await time_travel.rewind(self, _thread_of("rewind", thread), to=to, kept_as=kept_as)

    async def replay(
        self,
        thread: ThreadRef | str,
        *,
        tools: Literal["live", "recorded"] = "live",
        on_divergence: Literal["stop", "live", "continue"] = "stop",
        routing: Literal["today", "recorded"] = "today",
        state: Mapping[str, Any] | None = None,
    ) -> ReplayReport:
        """Run this network, as it is today, against the recorded `thread`: each model
        request is answered from the recording, and the report says per step whether the
        request sent matches the recorded one (instructions, conversation, tools offered,
        routing), with a diff at the first divergence. The recorded thread is not changed:
        the replay runs on a thread of its own, in memory. See docs/evals.md.

        Args:
            thread: the recorded thread, as `run` takes it (a `ThreadRef`, or a bare id on
                the default store).
            tools: "live" runs the tools and compares their results with the recorded ones;
                "recorded" answers them from the recording (no side effect runs).
            on_divergence: "stop" ends the replay there; "live" goes on with the real model
                and tools; "continue" goes on answering from the recording.
            routing: "today" asks today's router and compares its choices; "recorded"
                calls the recorded agents in order (an LLM router is not asked).
            state: keys every replayed run starts with (`user:` / `app:` keys, which start
                empty), beside the state each recorded run's caller gave. Checked through
                the schema first: a key it refuses raises its `StateError` naming the key
                before anything is read or run.
        """
        from network.capabilities.replay import replay_thread  # noqa: PLC0415 (replays only)

        ref = ThreadRef.of(thread)
        if ref is None:
            raise ConfigurationError("replay() needs the recorded thread: a ThreadRef or an id")
        return await replay_thread(
            self, ref, tools=tools, on_divergence=on_divergence, routing=routing, state=state
        )

    def __repr__(self) -> str:
        return f"Network({self.name!r}, agents={list(self.agents)})"


class _Removed:
    """A method `Network` no longer has: reading it raises an `AttributeError` saying what
    replaced it. A descriptor, not a `__getattr__`: a class with one loses CPython's fast
    attribute reads, and the run reads the network's attributes on every step."""

    def __init__(self, replaced: str) -> None:
        self.replaced = replaced
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> NoReturn:
        raise AttributeError(f"Network.{self.name} was removed: {self.replaced}", name=self.name)


REMOVED = {
    "resume": "continue the run with network.run(result.resume(answers), ...)",
    "answer_tool_calls": "continue the run with network.run(result.tool_results(results), ...)",
    "run_with": "run it with network.run(input, ...); below the facade a run is carried out "
    "by network.kernel.run(network, input, options)",
    "start": "run it with network.run(input, ...)",
    "execute": "run it with network.run(input, ...); a context prepared elsewhere runs "
    "through network.kernel.execute(network, ctx)",
    "resources_for": "a run's resources are network.run.resources.run_resources(owner, "
    "factories, network.resources)",
}
"""What took the place of the methods `Network` no longer has: its run machinery moved to
the run kernel (`network.kernel`), its deprecated continuations to `run`'s inputs."""
if not TYPE_CHECKING:  # to a type checker a removed name stays an unknown attribute
    for _name, _replaced in REMOVED.items():
        _removed = _Removed(_replaced)
        _removed.__set_name__(Network, _name)
        setattr(Network, _name, _removed)


def _run_options(
    network: str,
    input: RunInput,
    thread: ThreadRef | str | None,
    deprecated: Mapping[str, Any],
    state: Mapping[str, Any] | State | None,
    deps: Any,
    resources: Mapping[str, ResourceFactory] | None,
    limits: Any,
    usage: Any,
    budget: Any,
    max_iter: int | None,
    run_id: str | None,
    sinks: Sequence[Sink],
    durable: bool,
) -> RunOptions:
    """`run`'s keywords as one `RunOptions`, checked before anything changes or is recorded:
    the thread (`thread=`, or the deprecated keywords, which a continuation of a stored run
    reads its thread id from), the run id (a thread store's id rules, as a stored run's),
    the limits, the usage carried, the budgets."""
    if isinstance(input, str):
        check_text_input(input)
    if not isinstance(sinks, Sequence) or isinstance(sinks, str | bytes):
        raise ConfigurationError(
            f"network {network!r}: sinks must be a list of event sinks (functions taking "
            f"each event), got {type(sinks).__name__}"
        )
    if run_id is not None:  # on a thread or not: it names the run's events, traces and records
        from network.threads.ids import check_id  # noqa: PLC0415 (thread stores load on use)

        check_id("run_id", run_id)
    stopped: Any = getattr(input, "stopped", None)
    return RunOptions(
        thread=thread_of(
            thread,
            deprecated,
            stopped_thread=stopped.thread_id if getattr(stopped, "persisted", False) else None,
        ),
        state=state,
        deps=deps,
        resources=resources,
        limits=_check_limits(network, limits),
        usage=None if usage is None else _check_usage(network, usage),
        budget=None if budget is None else coerce_budgets(network, budget) or None,
        max_iter=max_iter,
        run_id=run_id,
        sinks=sinks,
        durable=durable,
    )


def _thread_of(where: str, thread: ThreadRef | str) -> ThreadRef:
    """The thread `fork` / `rewind` act on, as `run` takes it."""
    ref = ThreadRef.of(thread)
    if ref is None:
        raise ConfigurationError(
            f"{where}() needs the thread: {where}(ThreadRef(id, user_id=..., store=...), ...)"
        )
    return ref


def _check_usage(network: str, usage: Any) -> UsageFigures | None:
    """`usage=` of a run: `UsageFigures` whose counts are whole, finite and not negative."""
    if usage is None:
        return None
    if not isinstance(usage, UsageFigures):
        raise ConfigurationError(
            f"network {network!r}: usage must be UsageFigures (what earlier runs spent), "
            f"got {usage!r}"
        )
    for name in ("model_calls", "tool_calls", "input_tokens", "output_tokens", "unpriced"):
        check_number(f"network {network!r}: usage.{name}", getattr(usage, name), integer=True)
    check_number(f"network {network!r}: usage.cost_usd", usage.cost_usd)
    return usage


def _check_limits(network: str, limits: Any) -> UsageLimits | None:
    if limits is None or isinstance(limits, UsageLimits):
        return limits
    raise ConfigurationError(f"network {network!r}: limits must be UsageLimits, got {limits!r}")


def _check_telemetry(network: str, telemetry: Any) -> Telemetry | None:
    if telemetry is None or isinstance(telemetry, Telemetry):
        return telemetry
    raise ConfigurationError(
        f"network {network!r}: telemetry must be network.Telemetry, got {telemetry!r}"
    )


def _positional(
    name: str, positional: Sequence[Any], agents: Any, router: Any, model: Any, max_iter: Any
) -> tuple[Any, Any, Any, Any]:
    """The old positional spelling's agents, router, model and max_iter (with a warning)."""
    given = positional_arguments(
        f"Network({name!r}, ...)",
        positional,
        ("agents", "router", "default_model", "max_iter"),
        {"agents": agents, "router": router, "default_model": model, "max_iter": max_iter},
        {"agents": (), "router": None, "default_model": None, "max_iter": DEFAULT_MAX_ITER},
    )
    return given["agents"], given["router"], given["default_model"], given["max_iter"]


def _agents_by_name(network: str, agents: Sequence[AgentLike]) -> dict[str, AgentLike]:
    """The network's agents by name: each one an agent, no name twice, at least one."""
    named: dict[str, AgentLike] = {}
    if callable(getattr(agents, "call", None)) or not isinstance(agents, Iterable):
        # one agent given bare was "'Agent' object is not iterable", None "'NoneType' ..."
        raise ConfigurationError(
            f"network {network!r}: agents must be a list of agents, got "
            f"{type(agents).__name__} (agents=[...])"
        )
    for agent in agents:
        agent_name = getattr(agent, "name", None)
        if not isinstance(agent_name, str) or not callable(getattr(agent, "call", None)):
            raise ConfigurationError(f"network {network!r}: {agent!r} is not an agent")
        if agent_name in named:
            raise ConfigurationError(f"network {network!r}: two agents are named {agent_name!r}")
        if not agent_name or not storable_key(agent_name):  # a custom agent, or renamed
            raise ConfigurationError(
                f"network {network!r}: agent name {agent_name!r} is empty or holds NUL or a "
                "lone surrogate, which a thread store cannot keep"
            )
        named[agent_name] = agent
    if not named:
        raise ConfigurationError(f"network {network!r} has no agents")
    return named


def _router_of(
    network: str,
    agents: Mapping[str, AgentLike],
    router: Any,
    handoff_edges: Sequence[tuple[str, str]],
) -> Router:
    """The router given, or the default one: handoffs followed from the first agent when
    several agents hand off, the one agent run once when there is one."""
    if router is None and len(agents) > 1 and handoff_edges:
        router = FollowHandoffs(next(iter(agents)))
    if router is None:
        if len(agents) != 1:
            # AgentKit falls back to an LLM routing agent on the default model; here the
            # choice is spelled out, so the error says how.
            raise ConfigurationError(
                f"network {network!r} has {len(agents)} agents and no router: pass "
                "router=routing_agent(model) (from routers) to let a model choose, or a "
                "function of the run context"
            )
        router = _run_once(next(iter(agents.values())))
    return checked_router(network, router)


def _handoff_edges(agents: Mapping[str, AgentLike]) -> tuple[tuple[str, str], ...]:
    """`(source, target)` of every handoff the agents offer (`Agent.handoff_targets`), in
    the agents' order: what routers check and drawings draw. A target outside the network is
    kept: a handoff to it is refused to the model at run time."""
    return tuple(
        (name, target)
        for name, agent in agents.items()
        for target in getattr(agent, "handoff_targets", ())
    )


def _run_once(agent: AgentLike) -> Router:
    def once(ctx: RunContext) -> Any:
        return agent if ctx.call_count == 0 else None

    return once
