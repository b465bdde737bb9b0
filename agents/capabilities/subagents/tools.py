"""Agents and networks as tools: a tool call that runs a whole run of its own.

`agent.as_tool(...)` and `network.as_tool(...)` give a supervisor agent a tool whose call runs
the agent (inference -> tools until it answers, as `agent.run` does) or the network, as a
sub-run of the supervisor's run (`network.run.subrun`):

- its state is its own: it starts from the keys `state_in={inner_key: outer_key}` copies from
  the caller's state, and when it finishes, `state_out={outer_key: inner_key}` copies keys
  back, through the tool's own view of the caller's state (validated like any tool write,
  dropped if the call fails);
- what it spends is the caller's: usage limits, token totals and AG-UI's usage report count
  it; its trace nests under the tool's span;
- its events stream to the caller's sinks between SUBAGENT_STARTED and SUBAGENT_FINISHED (or
  SUBAGENT_ERROR), each carrying its `subagent_run_id` (AG-UI 1.0). Its run events, and its
  state events (its state is not the client's), are not forwarded;
- cancelling the caller's run cancels it (it runs inside the tool call);
- a tool inside it that waits for a person's confirmation stops it, and with it the caller's
  run: the caller's `RunResult.interrupts` (and AG-UI RUN_FINISHED outcome) list it, naming
  the sub-agent run. Answering it (`network.run(result.resume(...))`, in memory or on a
  thread) continues the sub-run from where it stopped, and its tool runs then, once.

The tool's result is the sub-run's typed output when its last agent has one, else its final
text, unless `output_extractor=fn(result)` picks it from the sub-run's `RunResult`. A sub-run
that fails, or that a usage limit, a guardrail's trip or its cap of calls stops before it
finished, is an error result the model reads; with
`on_failure="raise"` it fails the caller's run instead (`agents.capabilities.subagents.failing`).
Its failure is screened as a run's own is: the library's errors are read as they are; any
other exception (a router's, a delegate model's, a hook's: it may carry a connection string)
is `internal error (reference err_...)` to the model, in the tool result and SUBAGENT_ERROR
the client sees, and in the stored conversation, and is logged whole under that reference.

Decisions where the issue is silent: the sub-run's id is its `subagent_run_id` (one per tool
call; a continued sub-run keeps it); a missing `state_in` source key is left out (the
sub-run's schema default applies); a `state_out` key the sub-run never set is not written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any

import anyio

from agents.capabilities.subagents.failing import keep_cause
from agents.tools.tool import Tool
from agents.tools.tool_context import ToolContext
from network import kernel
from network.errors import AgentNetworkError, StateError, ToolError
from network.history.messages import message_list_adapter
from network.network import Network
from network.run.context import AgentLike, NetworkLike, RunContext
from network.run.emitter import Listener, Observer, best_effort
from network.run.events import (
    RunError,
    RunEvent,
    RunFinished,
    RunStarted,
    StateDelta,
    StateSnapshot,
    SubagentError,
    SubagentFinished,
    SubagentStarted,
)
from network.run.inputs import Resume
from network.run.interrupts import Interrupt
from network.run.options import RunOptions
from network.run.result import RunResult, Stop, StopReason
from network.run.screening import INTERNAL_ERROR, screened
from network.run.subrun import ChildBudget, SubrunTool, new_subrun_id, subrun_id_for
from network.state.state import State

_HELD = "(waiting for a person's confirmation inside the sub-agent)"


def subrun_tool(spec: SubrunTool) -> Tool:
    """The `Tool` that runs `spec`'s network as a sub-run (see the module docstring)."""

    async def run_subagent(input: str, context: ToolContext) -> Any:
        return await _SubrunCall(spec, context).run(input)

    # Real objects, not the strings `from __future__ import annotations` makes: the input's
    # description is the spec's.
    run_subagent.__annotations__ = {
        "input": Annotated[str, spec.input_description],
        "context": ToolContext,
        "return": Any,
    }
    return SubagentTool(run_subagent, spec)


class SubagentTool(Tool):
    """A `Tool` that runs a sub-run; `subagent` says what it runs (the AG-UI capabilities
    answer lists these as the server's sub-agents)."""

    __slots__ = ("subagent",)
    checks_name = False  # an agent's or network's name by default; `as_tool` checks one given

    def __init__(self, function: Any, spec: SubrunTool) -> None:
        super().__init__(function, name=spec.name, description=spec.description)
        self.subagent = spec


def answering(agent: AgentLike) -> Callable[[RunContext], Any]:
    """The router of an agent run on its own as a tool: again while it calls tools."""

    def again(ctx: RunContext) -> Any:
        last = ctx.last_result
        if last is None:
            return agent
        if last.skipped:
            return Stop(StopReason.AGENT_SKIPPED)
        if last.tool_calls:
            return agent
        return Stop(StopReason.AGENT_ANSWERED)

    return again


def agent_network_of(
    agent: AgentLike, max_steps: int, state_schema: Any
) -> Callable[[RunContext], Network]:
    """For a parent run: the one-agent network `agent.as_tool` runs (the parent network's
    `default_model` for an agent without a model of its own, and its telemetry options)."""

    def network_of(parent: RunContext) -> Network:
        return Network(
            agent.name,
            agents=[agent],
            router=answering(agent),
            default_model=getattr(parent.network, "default_model", None),
            max_iter=max_steps,
            state_schema=state_schema,
            telemetry=getattr(parent.network, "telemetry", None),  # traced as its caller is
        )

    return network_of


class _SubrunCall:
    """One call of a sub-run tool: a new sub-run, or the continuation of one that stopped."""

    def __init__(self, spec: SubrunTool, context: ToolContext) -> None:
        self.spec = spec
        self.context = context
        parent = context.run
        if not isinstance(parent, RunContext):
            raise ToolError(f"{spec.label} runs only as a tool of a run", tool=spec.name)
        self.parent: RunContext = parent

    async def run(self, input: str) -> Any:
        spec, parent = self.spec, self.parent
        network = spec.network_of(parent)
        run_id, request, continuing = self._request(network, input)
        options = RunOptions(
            state=None if continuing else self._state_in(),
            deps=parent.deps,
            limits=spec.limits,
            max_iter=spec.max_iter,
            run_id=run_id,
            sinks=self._sinks(run_id),
        )
        emitter = parent.engine.emitter
        if emitter.active:
            await emitter.emit(
                SubagentStarted(
                    network.name,
                    spec.description or None,
                    parent_subagent_run_id=_attributed_to(parent),
                    parent_tool_call_id=self.context.tool_call_id,
                    subagent_run_id=run_id,
                )
            )
        try:
            result: RunResult = await kernel.run(network, request, options, parent=parent)
            if result.interrupts:
                return await self._stopped(input, run_id, result)
            output = self._finish(result, options.max_iter or network.max_iter)
        except BaseException as error:
            wrapped = await self._failed(error, run_id)
            if wrapped is not None:
                raise wrapped from error
            raise
        if emitter.active:
            await emitter.emit(SubagentFinished(_json_safe(output), subagent_run_id=run_id))
        return output

    def _request(self, network: NetworkLike, input: str) -> tuple[str, Any, bool]:
        """The sub-run's id and what it is asked: `input` in a new sub-run, or the answers
        to the sub-run this call stopped on (True: a continuation)."""
        answered = (self.parent.engine.subagent_answers or {}).get(self.context.tool_call_id)
        if not answered:
            return subrun_id_for(self.parent, self.context.tool_call_id), input, False
        stopped = _stopped_of(network, answered[0][0])
        # the answers' own ids are the sub-run's interrupts' ids
        return stopped.run_id, Resume([answer for _, answer in answered], stopped=stopped), True

    async def _stopped(self, input: str, run_id: str, result: RunResult) -> Any:
        """The sub-run stopped on interrupts: the call waits for their answers."""
        if self.parent.engine.steps is not None:  # a durable run replays its recorded result
            raise ToolError(
                f"{self.spec.label} stopped on a confirmation, which cannot wait inside a "
                "durable run (its tool call is recorded whole); run the supervisor "
                "without durable=True, or give the sub-agent no tool that needs one",
                tool=self.spec.name,
            )
        held = self._hold(input, run_id, result)
        emitter = self.parent.engine.emitter
        if emitter.active:
            await emitter.emit(SubagentFinished(interrupt_ids=held, subagent_run_id=run_id))
        return _HELD

    async def _failed(self, error: BaseException, run_id: str) -> ToolError | None:
        """Tell the client the sub-agent's segment ended, however it ended; the `ToolError`
        the call raises instead of `error`, or None to raise `error` itself."""
        text = _error_text(error, run_id, self.spec.name)
        emitter = self.parent.engine.emitter
        if emitter.active:  # each sink on its own: a client that left is told nothing
            event = SubagentError(text, _error_code(error), subagent_run_id=run_id)
            # past the emitter, so named here as it would name it: a parallel branch's
            event.branch = getattr(emitter, "branch", None)
            with anyio.CancelScope(shield=True):
                await best_effort(emitter.sinks, event)
        if isinstance(error, Exception):
            if self.spec.on_failure == "raise":  # the caller's run fails with it as cause
                keep_cause(self.parent, self.context.tool_call_id, error)
            if not isinstance(error, ToolError):
                return ToolError(f"{self.spec.label} failed: {text}", tool=self.spec.name)
        return None

    def _state_in(self) -> dict[str, Any]:
        kv = self.context.state.kv
        return {
            inner: kv.get(outer) for inner, outer in self.spec.state_in.items() if kv.has(outer)
        }

    def _sinks(self, run_id: str) -> list[Any]:
        """The sub-run's sink: its events, attributed, to the parent's sinks (when it has any)."""
        emitter = self.parent.engine.emitter
        if not emitter.active:
            return []
        forward = _Forward(emitter, run_id)
        # The sub-run's model streams only when the parent's would: a parent only traced or
        # logged (Observers) never makes a model stream.
        return [Listener(forward) if emitter.streaming else Observer(forward)]

    def _finish(self, result: RunResult, cap: int) -> Any:
        """The sub-run finished: `state_out` written to the caller's state, and its output.
        One that stopped before it finished (a usage limit, a guardrail's trip, its cap of
        calls) is the call's error, as a failed one is: else the model read an empty or
        half-done answer as the delegate's."""
        spec = self.spec
        reason = result.stop_reason
        if reason == StopReason.USAGE_LIMIT:
            raise ToolError(
                f"{spec.label} stopped: {result.limit_exceeded} (the run's usage limit)",
                tool=spec.name,
            )
        if reason == StopReason.GUARDRAIL:  # named, not what it said (`info`: the app's)
            raise ToolError(f"{spec.label} stopped: {result.guardrail}", tool=spec.name)
        if reason == StopReason.MAX_ITER:
            option = "max_steps" if spec.label.startswith("agent ") else "max_iter"
            raise ToolError(
                f"{spec.label} stopped before it finished: it reached its {option} of {cap} calls",
                tool=spec.name,
            )
        inner = result.state.kv
        kv = self.context.state.kv
        for outer, source in spec.state_out.items():
            if inner.has(source):
                try:
                    kv.set(outer, inner.get(source))
                except StateError as error:  # the delegate's work is done: the model is
                    # told so, or it would read "failed" and delegate (tools and all) again
                    raise ToolError(
                        f"{spec.label} answered, but the caller's state refused its "
                        f"{source!r} as {outer!r} (state_out): {error}; none of its "
                        "state_out was written",
                        tool=spec.name,
                    ) from error
        if spec.output_extractor is not None:  # the caller's choice of what the model reads
            return spec.output_extractor(result)
        results = result.state.results
        last = results[-1] if len(results) else None
        value = getattr(last, "output_value", None)
        if value is not None:
            return value
        return result.output or ""

    def _hold(self, input: str, run_id: str, result: RunResult) -> list[str]:
        """The sub-run stopped on interrupts: each becomes one of the caller's, carrying what
        continuing the sub-run needs; the tool call waits (`agents.resume.waiting` drops its
        record)."""
        context, parent = self.context, self.parent
        stopped = {
            "run_id": run_id,
            "state": result.state.snapshot(),
            "messages": message_list_adapter().dump_python(
                list(result.state.messages), mode="json"
            ),
            "interrupts": [interrupt.to_json() for interrupt in result.interrupts],
        }
        held: list[Interrupt] = []
        for inner in result.interrupts:
            waiting = (inner.nested or {}).get("waiting") or {
                "tool_call_id": inner.tool_call_id,
                "tool": inner.tool,
                "agent": inner.agent,
                "arguments": inner.arguments,
            }
            held.append(
                Interrupt(
                    id=inner.id,
                    reason=inner.reason,
                    message=inner.message,
                    tool_call_id=context.tool_call_id,
                    tool=self.spec.name,
                    agent=context.agent.name,
                    arguments={"input": input},
                    subagent_run_id=inner.subagent_run_id or run_id,
                    nested={"waiting": waiting, "stopped": stopped},
                )
            )
        parent.engine.interrupts = (*parent.engine.interrupts, *held)
        return [interrupt.id for interrupt in held]


class _Forward:
    """The sub-run's events to the parent's sinks, attributed to the sub-agent run."""

    __slots__ = ("emitter", "run_id")

    _DROPPED = (RunStarted, RunFinished, RunError, StateSnapshot, StateDelta)

    def __init__(self, emitter: Any, run_id: str) -> None:
        self.emitter = emitter
        self.run_id = run_id

    async def __call__(self, event: RunEvent) -> None:
        if isinstance(event, self._DROPPED):
            return  # the sub-run's lifecycle is SUBAGENT_*; its state is not the client's
        # A copy: the sub-run's own sinks (its spans, its logs) see the event as it was.
        if isinstance(event, SubagentStarted):  # a sub-agent of the sub-agent
            if event.parent_subagent_run_id is None:
                event = replace(event, parent_subagent_run_id=self.run_id)
        elif event.subagent_run_id is None and not isinstance(
            event, (SubagentFinished, SubagentError)
        ):
            event = replace(event, subagent_run_id=self.run_id)
        await self.emitter.emit(event)


def _attributed_to(parent: RunContext) -> str | None:
    """The sub-agent run `parent` is, when it is one (its events carry that id)."""
    return parent.run_id if isinstance(parent.engine.budget, ChildBudget) else None


def _stopped_of(network: NetworkLike, interrupt: Interrupt) -> RunResult:
    """The stopped sub-run an interrupt carries, as the `RunResult` its continuation takes."""
    data = (interrupt.nested or {}).get("stopped") or {}
    messages = message_list_adapter().validate_python(data.get("messages") or [])
    return RunResult(
        stop_reason=StopReason.INTERRUPTED,
        state=State(data.get("state") or {}, schema=network.schema, messages=messages),
        run_id=str(data.get("run_id") or new_subrun_id()),
        interrupts=[Interrupt.from_json(item) for item in data.get("interrupts") or ()],
    )


def _error_text(error: BaseException, run_id: str, tool: str) -> str:
    """What the supervisor's model, its tool result and the client read of a sub-run's
    failure: screened as a run's own failure is (`network.run.screening`): the library's
    errors as they are, any other exception (a router's, a delegate model's, a hook's) an
    `internal error (reference err_...)`, logged whole under that reference."""
    if isinstance(error, anyio.get_cancelled_exc_class()):
        return "cancelled"
    return screened(error, subagent_run_id=run_id, tool=tool)


def _error_code(error: BaseException) -> str:
    """SUBAGENT_ERROR's code: the library error's class, as RUN_ERROR's; else internal."""
    if isinstance(error, AgentNetworkError | anyio.get_cancelled_exc_class()):
        return type(error).__name__
    return INTERNAL_ERROR


def _json_safe(value: Any) -> Any:
    """A result the SUBAGENT_FINISHED event can carry (JSON), else its text."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value
