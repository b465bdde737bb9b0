"""`Capability`: one feature, plugged into the stages of a run and of an agent call.

The run and the agent step know stages, not features. A capability overrides the stages it
needs; the others cost nothing, because an agent's capabilities (its own, then its network's,
then the run's) are resolved once into the tuple that implements each stage
(`network.run.stages`), and a stage nobody implements is an empty tuple the step skips.

The stages of one agent call, in the order they run:

1. `wrap_call(call, proceed)`: around the whole call (`proceed()` runs it and returns its
   `InferenceResult`). A savepoint a guardrail's trip rolls back lives here.
2. `instructions(call, text)`: the system text, rendered from state; return it changed (to
   add what memory recalled, say).
3. `request(call)`: what the model is about to be sent: `call.prompt`, `call.history`,
   `call.tools` / `call.schemas` (the tools offered), `call.sent_prompt` /
   `call.sent_history` (what is sent, when it differs from what is recorded), or
   `call.skip = True` to skip the model (the call is recorded as skipped).
4. `wrap_model(call, request, proceed)`: around the model request (`await proceed(request)`
   asks the model once and returns its `ModelResponse`; it may be called again with another
   request, as a re-ask does).
5. `answer(call, response)`: the answer, before its tool calls; return it (changed or not).
6. `tool_calls(call, calls)`: the answer's tool calls about to run; return those that run
   here. A capability that takes one away (to wait for a person, to run it in a client, to
   refuse it) says what became of it with `call.set_aside(record)` when it has a result.
7. `wrap_tool(use, proceed)`: around one tool call (`use.call`, `use.tool`, the `use.state`
   it writes to); `await proceed()` runs it and returns its `ToolCallRecord`.
8. `tool_results(call, records)`: the records of the answer's calls, in the model's order.
9. `output(call, value)`: a final answer (text, or a typed value) before it is kept: check it
   (raise to stop the run) and return what `output_key` stores.
10. `record(call, result)`: the `InferenceResult` history keeps; return it (changed or not).

In place of a call, when a run takes up the calls an earlier run stopped on (the answers to
its interrupts, `network.run.interrupts`):

11. `resume_calls(run, calls)`: how the agent's answered interrupts are grouped into the
   calls that take them up (`calls`: a list of calls, each a list of `(Interrupt, Answer)`
   pairs; at first one call holding them all). Return the calls,
   regrouped or not: a capability whose own interrupts need calls of their own (a remote A2A
   task takes one reply per call) moves them there. Synchronous: it only groups.
12. `wrap_resume(run, answered, proceed)`: around taking up one of those calls
   (`answered`: its pairs). `await
   proceed(answered)` takes them up the default way (runs the accepted tool calls through
   `wrap_tool`, records the others as rejected or answered) and returns one
   `InferenceResult`, as if the agent's call ended there. A capability whose own interrupts
   these are takes them up itself (a remote A2A task waiting for input sends the answer to
   that task) and returns the result instead, or hands on the ones it leaves.

The stages of a run, of the network's and the run's capabilities (an agent's own have none):
`next_call(run)` before each agent call (and each fan-out), returning a `Stop` to end the run
there; `run_started(run)` once the run's first event is out and before its first decision;
`resumed(run, error)` in a run that took up answers (`run.engine.resume`), once the calls
that take them up are done (each answered call has its result, or waits again), before the
run's first decision: `error` is what that step raised (the stage then runs shielded from
cancellation, and the error goes on once it returns), else None.

Order: stages on the way in (`resume_calls`, `wrap_resume`, `wrap_call`, `instructions`, `request`,
`wrap_model`, `tool_calls`, `wrap_tool`) run the capabilities in order, the first outermost;
stages on the way out (`answer`, `tool_results`, `output`, `record`) run them in reverse, so
the first has the last word. The order: by their class's `order` (lower first), then as they
were resolved: the agent's own (those its keywords built, in the order `Agent` documents,
then `capabilities=`), then the run's, then the network's (its own, then those its agents
bring it: `for_network`). A wrapping stage's first capability is the outermost. A network
capability whose class says `agent_overrides_network = True` is dropped for an agent that has
one of the same class (the network's context policy is the default of agents that set none).

Per-run state: `run.local(key, factory)` (the first call makes it); per-call state:
`call.note(key, factory)`. A capability never keeps per-run state on itself: one capability
object serves every run of its network at once.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from network.errors import ConfigurationError

if TYPE_CHECKING:
    from network.history.messages import ToolCall
    from network.history.model_io import ModelRequest, ModelResponse
    from network.history.results import InferenceResult, ToolCallRecord
    from network.run.agent_call import AgentCall, ToolUse
    from network.run.context import RunContext
    from network.run.interrupts import Answer, Interrupt
    from network.run.result import Stop

__all__ = ["AGENT_STAGES", "RUN_STAGES", "Capability", "ModelProceed", "ResumeProceed"]

ModelProceed = Callable[["ModelRequest"], Awaitable["ModelResponse"]]
"""What `wrap_model` is given to go on with: asks the model once with the request it is passed."""

ResumeProceed = Callable[["list[tuple[Interrupt, Answer]]"], Awaitable["InferenceResult"]]
"""What `wrap_resume` is given to go on with: takes up the answered interrupts it is passed."""

AGENT_STAGES = (
    "wrap_call",
    "instructions",
    "request",
    "wrap_model",
    "answer",
    "tool_calls",
    "wrap_tool",
    "tool_results",
    "output",
    "record",
    "resume_calls",
    "wrap_resume",
)
"""The stages of an agent call, in the order they run, then `resume_calls` and `wrap_resume`,
which run in place of a call (see the module docstring)."""

RUN_STAGES = ("next_call", "run_started", "resumed")
"""The stages of a run."""


class Capability:
    """Base class of a feature plugged into the stages of runs and agent calls.

    Override only the stages the feature needs (see the module docstring for each stage and
    their order); the base class's are never called. An instance that needs fewer stages
    than its class implements sets the others to None (`self.answer = None`). Give it to
    `Agent(capabilities=[...])`,
    `Network(capabilities=[...])`, or build it from the keywords that spell it
    (`Agent(handoffs=...)` builds the handoffs capability).
    """

    agent_overrides_network: ClassVar[bool] = False
    """True: an agent with a capability of this class drops its network's (a default)."""

    merge: ClassVar[bool] = False
    """True: the capabilities of this class that apply to one agent (its own, its run's, its
    network's) become one, `merge_all(found)`, in the place of the first (an agent's and its
    network's guardrails run as one set)."""

    order: ClassVar[int] = 0
    """Lower runs first (outermost): for a capability whose stage shapes what every other
    one reads (a handoff's input filter). Equal orders keep the resolution order."""

    every_request: ClassVar[bool] = False
    """True: the capability is the run's for every model request made on its behalf, also
    those of an agent called outside the run's own calls, in a context of its own (a
    guardrail's agent), which otherwise sees none of the run's capabilities: the metering
    of shared budgets, which every request reserves on."""

    @classmethod
    def merge_all(cls, found: Sequence[Capability]) -> Capability:
        """The one capability standing for `found` (two or more of this class, in resolution
        order), for a class that sets `merge = True`."""
        raise NotImplementedError

    def for_network(self) -> Capability | None:
        """A capability this one brings to every agent of the network its agent joins (an
        agent's handoffs bring the input filter their targets apply), or None. One object
        brought by several agents counts once."""
        return None

    # -- the run ---------------------------------------------------------------------------

    def next_call(self, run: RunContext) -> Stop | None:
        """Before each agent call (and each fan-out): a `Stop` ends the run there."""
        raise NotImplementedError

    async def run_started(self, run: RunContext) -> None:
        """Once per run, after its first event and before its first decision."""
        raise NotImplementedError

    async def resumed(self, run: RunContext, error: BaseException | None) -> None:
        """In a run that took up answers, once the calls that take them up are done (each
        answered call has its result or waits again): `error`, what that step raised."""
        raise NotImplementedError

    # -- one agent call --------------------------------------------------------------------

    async def wrap_call(
        self, call: AgentCall, proceed: Callable[[], Awaitable[InferenceResult]]
    ) -> InferenceResult:
        """Around the whole call: `return await proceed()`, with what comes around it."""
        raise NotImplementedError

    async def instructions(self, call: AgentCall, text: str) -> str:
        """The system text of this call, changed or not."""
        raise NotImplementedError

    async def request(self, call: AgentCall) -> None:
        """Shape what the model is sent (prompt, history, tools offered) or skip it."""
        raise NotImplementedError

    async def wrap_model(
        self, call: AgentCall, request: ModelRequest, proceed: ModelProceed
    ) -> ModelResponse:
        """Around the model request: `return await proceed(request)`, changed or repeated."""
        raise NotImplementedError

    async def answer(self, call: AgentCall, response: ModelResponse) -> ModelResponse:
        """The model's answer before its tool calls run, changed or not."""
        raise NotImplementedError

    async def tool_calls(self, call: AgentCall, calls: list[ToolCall]) -> list[ToolCall]:
        """The answer's tool calls that run here (the others set aside: see the module)."""
        raise NotImplementedError

    async def wrap_tool(
        self, use: ToolUse, proceed: Callable[[], Awaitable[ToolCallRecord]]
    ) -> ToolCallRecord:
        """Around one tool call: `return await proceed()`, with what comes around it."""
        raise NotImplementedError

    async def tool_results(
        self, call: AgentCall, records: list[ToolCallRecord]
    ) -> list[ToolCallRecord]:
        """The records of the answer's tool calls, in the model's order, changed or not."""
        raise NotImplementedError

    async def output(self, call: AgentCall, value: Any) -> Any:
        """A final answer before it is kept: raise to stop, return what `output_key` gets."""
        raise NotImplementedError

    async def record(self, call: AgentCall, result: InferenceResult) -> InferenceResult:
        """The record history keeps of the call, changed or not."""
        raise NotImplementedError

    # -- in place of a call: taking up what an earlier run stopped on --------------------

    def resume_calls(
        self, run: RunContext, calls: list[list[tuple[Interrupt, Answer]]]
    ) -> list[list[tuple[Interrupt, Answer]]]:
        """The calls that take up an agent's answered interrupts (each a list of `(Interrupt,
        Answer)` pairs), regrouped or not: give this capability's own the calls they need."""
        raise NotImplementedError

    async def wrap_resume(
        self, run: RunContext, answered: list[tuple[Interrupt, Answer]], proceed: ResumeProceed
    ) -> InferenceResult:
        """Around taking up `run.agent`'s answered interrupts: `return await
        proceed(answered)`, or take up those that are this capability's own."""
        raise NotImplementedError


def implements(capability: Capability, stage: str) -> bool:
    """Whether `capability` implements `stage`: its class overrides it, and the instance did
    not turn it off (set it to None: one instance of a class may need fewer stages)."""
    found = getattr(capability, stage, None)
    if found is None:
        return False
    return getattr(found, "__func__", None) is not getattr(Capability, stage)


def checked_capabilities(
    owner: str, given: Sequence[Any] | None, before: Sequence[Capability] = ()
) -> tuple[Capability, ...]:
    """`before`, then `owner`'s `capabilities=` `given` (a list; None is none), each checked: a
    `Capability`, and not one already there (the same object twice), else a
    `ConfigurationError` naming `owner`."""
    found = list(before)
    if given is None:
        given = ()
    if isinstance(given, Capability | str) or not isinstance(given, Sequence):
        raise ConfigurationError(
            f"{owner}: capabilities must be a list of Capability objects, got {given!r:.100}"
            + (" (put it in a list)" if isinstance(given, Capability) else "")
        )
    for item in given:
        if not isinstance(item, Capability):
            raise ConfigurationError(f"{owner}: {item!r} is not a Capability")
        if any(item is known for known in found):
            raise ConfigurationError(f"{owner}: capability {item!r} given twice")
        _check_kinds(owner, item)
        found.append(item)
    return tuple(found)


SYNC_STAGES = frozenset({"next_call", "resume_calls"})
"""The stages called without `await`; every other stage is awaited."""


def _check_kinds(owner: str, capability: Capability) -> None:
    """`ConfigurationError` for a stage method written `def` where the run awaits it (or
    `async def` where it does not): found here, not as a TypeError in the middle of a run
    ("object str can't be used in 'await' expression"). A callable an instance sets, or a
    decorated method, may return an awaitable without being a coroutine function: trusted."""
    for stage in (*AGENT_STAGES, *RUN_STAGES):
        if not implements(capability, stage):
            continue
        function = getattr(getattr(capability, stage), "__func__", None)
        if function is None or hasattr(function, "__wrapped__"):
            continue
        synchronous = stage in SYNC_STAGES
        if inspect.iscoroutinefunction(function) == synchronous:
            wanted = "a plain def (it is not awaited)" if synchronous else "async def"
            raise ConfigurationError(
                f"{owner}: capability {type(capability).__name__}.{stage} must be {wanted}"
            )
