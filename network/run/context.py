"""`RunContext`: what routers, hooks, instruction functions and agents see of a run.

The protocols a run talks through (`AgentLike`, `Router`, `NetworkLike`, `StepRunner`, ...)
live here with the context because they and the context name each other;
`network.run.protocols` and `network.run.steps` re-export them. Library signals between the
parts of a run are typed fields of the engine's bookkeeping (`RunBookkeeping`, reached as
`ctx.engine`); `extras` is left to user code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from network.history.handoffs import HandoffRecord, active_agent
from network.history.messages import ToolCall
from network.history.results import InferenceResult, ModelCall, Usage
from network.run.budgets.account import BudgetAccount
from network.run.client_tools import ClientTool
from network.run.emitter import Emitter
from network.run.guardrails import GuardrailLog
from network.run.interrupts import Answer, Interrupt
from network.run.limits import Budget
from network.run.parallel import Branch, BranchFailure
from network.run.resources import Resources
from network.state.schema import StateSchema
from network.state.state import State

if TYPE_CHECKING:
    from typing_extensions import TypeVar as TypeVarWithDefault

    DepsT = TypeVarWithDefault("DepsT", default=Any)
else:
    # The default (`RunContext` alone means `RunContext[Any]`) matters to type checkers only;
    # typing's own TypeVar spares `import network` typing_extensions (~10 ms).
    DepsT = TypeVar("DepsT")
"""The type of a run's `deps` (`Network[Deps]`, `RunContext[Deps]`, `ToolContext[Deps]`)."""

T = TypeVar("T")


@runtime_checkable
class AgentLike(Protocol):
    """What a network runs: a named thing whose `call` is one inference plus its tool calls."""

    name: str
    description: str

    async def call(self, ctx: RunContext) -> InferenceResult: ...


Router = Callable[["RunContext[DepsT]"], Any | Awaitable[Any]]
"""`router(ctx) -> Agent | name | [Agent | name, ...] | Stop | None`, sync or async."""

ArgsListener = Callable[[str, str, str], Awaitable[None]]
"""`listener(tool_call_id, tool_name, arguments_so_far)`: follows tool arguments as they stream."""


class NetworkLike(Protocol):
    """What the run engine needs of a network definition (`network.Network` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def agents(self) -> Mapping[str, AgentLike]: ...
    @property
    def router(self) -> Router: ...
    @property
    def max_iter(self) -> int: ...
    @property
    def schema(self) -> StateSchema: ...
    @property
    def predict_state(self) -> Mapping[str, Mapping[str, Any]]: ...
    @property
    def default_model(self) -> Any: ...

    def resolve(self, choice: Any) -> list[AgentLike]: ...


class CallSettler(Protocol):
    """Told after each batch of tool calls which of them committed (the predictive state)."""

    async def settle(self, ctx: RunContext, records: Sequence[Any]) -> None: ...


class StepRunner(Protocol):
    """Runs (or replays) the recorded steps of one run."""

    async def route(self, ctx: RunContext, router: Router) -> Any:
        """The router's decision for `ctx`: agent names and `Parallel` fan-outs (to resolve),
        a `Stop`, or None."""
        ...

    async def model(self, agent: str, call: Callable[[], Awaitable[T]]) -> T:
        """The answer of one model request of agent `agent`."""
        ...

    async def tool(self, name: str, state: State, call: Callable[[], Awaitable[T]]) -> T:
        """The record of one tool call that writes to `state`."""
        ...

    async def summary(self, agent: str, call: Callable[[], Awaitable[T]]) -> T:
        """The `Summary` a context policy made for a request of agent `agent` (its
        summariser's model call is recorded like the agent's own)."""
        ...

    async def step(self, name: str, call: Callable[[], Awaitable[T]]) -> T:
        """Any other recorded step (a thread's load or commit)."""
        ...

    def fork(self, branch_ids: Sequence[str]) -> Sequence[StepRunner]:
        """The runners of a fan-out's branches about to run (ids in declared order)."""
        ...

    def join(self) -> None:
        """The branches of the fan-out last forked have ended (however they ended)."""
        ...


@dataclass(slots=True, frozen=True)
class RunStages:
    """A run's capabilities (`network.run.capability`: the run's own, then its network's) and
    the callables of the run's stages among them (`network.run.stages.run_stages`)."""

    capabilities: tuple[Any, ...] = ()  # Capability: its module names this one's context
    next_call: tuple[Callable[[Any], Any], ...] = ()
    run_started: tuple[Callable[[Any], Awaitable[None]], ...] = ()
    resumed: tuple[Callable[[Any, BaseException | None], Awaitable[None]], ...] = ()


NO_RUN_STAGES = RunStages()


@dataclass(slots=True, eq=False)
class RunBookkeeping:
    """The run engine's bookkeeping of one run: `RunContext.engine`.

    The signals the parts of a run (the loop, the agent step, the tool dispatch, sessions,
    the durable engine, telemetry, the kernel's capabilities) pass each other, kept apart from
    what user code reads of the context. Not user API: the fields change with the engine. A
    capability keeps its own per-run state with `RunContext.local`, not here.
    """

    emitter: Emitter = field(default_factory=Emitter)
    resources: Resources = field(default_factory=Resources)
    # Usage totals, summed as ints (cheaper than a model per step): `RunContext.usage`.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    usage_estimated: bool = False  # some of the totals are a client's estimate (Usage.estimated)
    cached_tokens: int = 0  # of prompt_tokens: read from the provider's prompt cache
    reasoning_tokens: int = 0  # of completion_tokens: spent thinking
    # The thread's owner and app, on a thread (set by its session; the AG-UI server's
    # principal is the owner): None without a thread. Memory keys what it recalls by them.
    user_id: str | None = None
    app_name: str | None = None
    # Tuples, replaced rather than appended to: no list per run (many runs live at once).
    # Tool calls waiting for a person (the loop stops when there are any), and the answers
    # the run starts by acting on.
    interrupts: tuple[Interrupt, ...] = ()
    resume: Sequence[tuple[Interrupt, Answer]] = ()
    # The history of the run those answers continue (its calls: where a call held in a
    # parallel branch was made, `network.run.held_branches`); () when there are none.
    resumed_history: Sequence[InferenceResult] = ()
    # Capabilities the run's caller adds to this run alone (a server's: the messages a request
    # sent with its answers, `network.serving.held_messages`): run stages like the network's,
    # resolved before them (`RunnableNetwork.run_stages_for`); () when there are none.
    capabilities: tuple[Any, ...] = ()
    # In memory, the calls of that history's fan-out, which the run's result keeps
    # (`RunResult.earlier_branch_results`): its own state has only its own calls.
    earlier_branch_results: Sequence[InferenceResult] = ()
    persisted: bool = False  # a thread session commits the run
    router_usage: Usage | None = None  # tokens a routing agent spent
    router_calls: tuple[ModelCall, ...] = ()  # a routing agent's requests, in order
    client_input: Any = None  # the protocol's request of a run that came through a server
    args_listeners: tuple[ArgsListener, ...] = ()  # follow tool arguments as they stream
    # Tools a caller declared for this run (an AG-UI client's), offered to every agent, and
    # the calls of client tools that end the run: see network.run.client_tools.
    client_tools: tuple[ClientTool, ...] = ()
    pending_tool_calls: tuple[ToolCall, ...] = ()
    budget: Budget | None = None  # the run's usage limits and spending (network.run.limits)
    # Hex ids of the run's root span when it is traced (set by the telemetry sink as the run
    # starts): what RUN_STARTED and `RunResult` tell the run's caller. Where the run is in
    # its trace beyond that is telemetry's own (`network.telemetry.run_trace`).
    trace_id: str | None = None
    span_id: str | None = None
    # Whether agents record `InferenceResult.model_calls`: only when usage limits or traces
    # read them, so that an unobserved step costs what it did before.
    record_model_calls: bool = False
    # The request that failed for good and ended the run (recorded like `model_calls`), so
    # the trace shows it as a failed chat span under its agent.
    failed_model_calls: tuple[ModelCall, ...] = ()
    # The durable engine's hook (network.durable): router decisions, model and tool calls go
    # through it when set, to be recorded or replayed. None: they are called directly.
    steps: StepRunner | None = None
    # The contexts of the branches of the fan-out running now, so that a sink (telemetry)
    # sees a branch's agent and results as they happen; () outside a fan-out.
    branch_contexts: tuple[RunContext, ...] = ()
    # In a network branch: the room left in the enclosing fan-out for calls
    # (`network.run.branch_run.FanOutRoom`), which a fan-out of its own counts in too.
    fan_out_room: Any = None
    # How many times each tool asked the model to try again (`Retry`) in this run; shared
    # by a fan-out's branches, so the budget is per run.
    tool_retries: dict[str, int] = field(default_factory=dict)
    # The run's guardrail checks and its last trip (network.run.guardrails);
    # None until a guardrail runs. `continues`: the run continues a stopped one (answers to
    # its interrupts or client tool calls): its input was checked by that run already.
    guardrails: GuardrailLog | None = None
    continues: bool = False
    # Sub-runs (an agent or a network used as a tool, `agents.as_tool`): the model requests
    # and tool calls they made, reported here as they spend (counted by the run's usage
    # limits and usage report, never in `state.results`, which holds this run's own calls).
    subagent_calls: tuple[ModelCall, ...] = ()
    subagent_tool_calls: int = 0
    # The budgets (`network.run.subrun.ChildBudget`) of the sub-runs running now, started by
    # this run's tools: a sibling's check counts their requests under way.
    subruns: tuple[Any, ...] = ()
    # The requests of the agent call under way, set once they are made (a sub-run's budget
    # counts them while the call's tools run: spent, not yet recorded).
    calls_in_flight: Sequence[ModelCall] = ()
    # How many tool calls of the agent call under way are running (a batch that awaits):
    # a sub-run's budget counts them, since a delegation in flight is a tool call made.
    # 0 between batches: the requests above count only while it is not.
    tools_in_flight: int = 0
    # The run's accounts on shared budgets (`network.run.budgets`): each model request
    # reserves on every one before it is sent. A sub-run's are its caller's, then its own.
    budget_accounts: tuple[BudgetAccount, ...] = ()
    # Answers to interrupts raised inside sub-runs, by the tool call that started each one:
    # set while the answered calls are resumed (`agents.resume.resume_call`).
    subagent_answers: Mapping[str, Sequence[tuple[Interrupt, Answer]]] | None = None
    # The capabilities every agent call of this run resolves with its own (the run's, then
    # the network's) and the run's own stages (`network.run.stages.run_stages`).
    stages: RunStages = NO_RUN_STAGES
    # What capabilities keep for the run (`RunContext.local`), by key; shared with the
    # run's branches.
    locals: dict[Any, Any] = field(default_factory=dict)
    # Who had the conversation when the run's state holds no agent calls to read it from
    # (the AG-UI server's in-memory threads keep only the client's messages); see
    # `RunContext.active_agent`. None: read from `state.results` alone.
    known_active_agent: str | None = None


@dataclass(slots=True, eq=False)
class RunContext(Generic[DepsT]):
    """The live context of one run, as routers, hooks, instruction functions and tools see it.

    - `network`, `state` (with the shortcuts `kv` and `results`), `input` (the run's input,
      or a parallel branch's own), `run_id`, `thread_id` (None without a thread);
    - `call_count` (agent calls so far), `stack` (the agents queued to run next, in order),
      `last_result` (the last agent call's), `agent` (the agent whose call is under way, if
      any), and the properties `handoff` (the handoff the last agent call made, if any),
      `active_agent` (who has the conversation, on a thread across turns) and `usage`;
      `user_id` and `app_name` say whose thread it is;
    - `branch` (the `Parallel` branch this context runs, None outside one) and
      `failed_branches` (the branches that failed under `Parallel(on_error="continue")`);
    - `deps`: the object given as `network.run(..., deps=...)`, as it was given (never
      copied, stored, streamed or logged); `await ctx.resource(name)` opens one of the run's
      resources; `extras` is for user code.

    `engine` is the run engine's bookkeeping (`RunBookkeeping`), not user API; a capability
    keeps its per-run state with `local(key, factory)`.
    """

    network: NetworkLike
    state: State
    input: str
    run_id: str
    thread_id: str | None = None
    call_count: int = 0
    stack: list[Any] = field(default_factory=list)
    last_result: InferenceResult | None = None
    agent: AgentLike | None = None
    # None when the run was given no deps; not in the repr: "never logged" holds for a
    # context shown as text too (in an error message, a log line, a traceback's locals)
    deps: DepsT = field(default=None, repr=False)  # type: ignore[assignment]
    extras: dict[str, Any] = field(default_factory=dict)  # for user code only
    # The parallel branch this context runs (a branch's own context: `network.run.fork`),
    # and the branches that failed under `Parallel(on_error="continue")` so far.
    branch: Branch | None = None
    failed_branches: tuple[BranchFailure, ...] = ()
    engine: RunBookkeeping = field(default_factory=RunBookkeeping)

    async def resource(self, name: str) -> Any:
        """The run's resource `name`, opened on first use and closed when the run ends."""
        return await self.engine.resources.get(name)

    def local(self, key: Any, factory: Callable[[], T]) -> T:
        """What a capability keeps for this run under `key` (made by `factory()` at first
        use): a capability object serves many runs at once, so its per-run state lives
        here. A parallel branch shares its run's."""
        locals_ = self.engine.locals
        found = locals_.get(key)
        if found is None:
            found = locals_[key] = factory()
        return found

    @property
    def user_id(self) -> str | None:
        """Whose run this is: the thread's user (`ThreadRef(user_id=...)`; over the AG-UI
        server, the principal that owns the thread). None without a thread or a user."""
        return self.engine.user_id

    @property
    def app_name(self) -> str | None:
        """The thread's app (`ThreadRef(app_name=...)`), None without a thread."""
        return self.engine.app_name

    @property
    def handoff(self) -> HandoffRecord | None:
        """The handoff the last agent call of this run made (`source`, `target`, `reason`,
        `call_id`), or None. The run follows it unless the router chooses otherwise: a router
        that returns None lets it through, one that returns an agent or a `Stop` overrides it."""
        last = self.last_result
        return None if last is None else last.handoff

    @property
    def active_agent(self) -> str | None:
        """The name of the agent that has the conversation: the target of the last handoff
        when the last agent call made one, else the last agent called, over the thread's
        whole history on a thread run (so a new turn knows who had it). None before any call.
        """
        found = active_agent(self.state.results)
        return found if found is not None else self.engine.known_active_agent

    @property
    def usage(self) -> Usage:
        """Token usage of the run so far."""
        engine = self.engine
        return Usage(
            prompt_tokens=engine.prompt_tokens,
            completion_tokens=engine.completion_tokens,
            total_tokens=engine.total_tokens,
            estimated=engine.usage_estimated,
            cached_tokens=engine.cached_tokens,
            reasoning_tokens=engine.reasoning_tokens,
        )

    def add_usage(self, usage: Usage) -> None:
        """Count one inference's tokens (routers may count theirs too)."""
        engine = self.engine
        engine.prompt_tokens += usage.prompt_tokens
        engine.completion_tokens += usage.completion_tokens
        engine.total_tokens += usage.total_tokens
        # before, the cached and reasoning counts were dropped here: `RunResult.usage` and
        # RUN_FINISHED (without recorded requests) had none of what the calls reported
        engine.cached_tokens += usage.cached_tokens
        engine.reasoning_tokens += usage.reasoning_tokens
        if usage.estimated:
            engine.usage_estimated = True

    @property
    def kv(self) -> Any:
        """Shortcut for `state.kv`."""
        return self.state.kv

    @property
    def results(self) -> MutableSequence[InferenceResult]:
        """Shortcut for `state.results`."""
        return self.state.results
