"""The guardrails capability: checks around an agent call and its tool calls.

Built by `Agent(input_guardrails=..., output_guardrails=...)` (and by tools that have
guardrails of their own) and by `Network(input_guardrails=..., output_guardrails=...)`; an
agent's and its network's merge into one capability (`merge_all`), so their checks run as one
set, as documented in docs/guardrails.md:

- input guardrails check the run's input (the user's message): the network's at the run's
  entry call (its first), the agent's at its first call of the run; none on a run that
  continues a stopped one (its input was checked). They run beside the model request (or
  before it, `blocking=True`);
- output guardrails (the agent's, then the network's) check every final answer, before it is
  committed or `output_key` is written;
- tool guardrails (`@tool(input_guardrails=..., output_guardrails=...)`) check a call's
  arguments before it runs and its result before the model sees it.

The whole call runs inside a savepoint: a trip (or any other stop of the run) undoes what the
call wrote, so nothing of it is committed. A discarded answer was paid for: its requests and
usage are counted (`GuardrailLog.discarded`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from network.capabilities.guardrails.tool_checks import guarded_call
from network.errors import RunStopped
from network.history.model_io import ModelRequest, ModelResponse
from network.history.results import InferenceResult, ToolCallRecord
from network.run.agent_call import AgentCall, ToolUse
from network.run.capability import Capability, ModelProceed
from network.run.guardrail_checks import check_beside, run_guardrails, tripped_error
from network.run.guardrails import Guardrail, log_of


@dataclass(slots=True)
class _Due:
    """The guardrails one agent call runs."""

    inputs: list[Guardrail]
    outputs: tuple[Guardrail, ...]


class Guardrails(Capability):
    """Input and output guardrails of an agent (`entry=False`) or of a network (`entry=True`:
    its input guardrails check only the run's first call), and whether tools have their own."""

    merge: ClassVar[bool] = True

    def __init__(
        self,
        inputs: Sequence[Guardrail] = (),
        outputs: Sequence[Guardrail] = (),
        *,
        entry: bool = False,
        tools: bool = False,
    ) -> None:
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.entry = entry
        self.tools = tools
        self.entry_inputs: tuple[Guardrail, ...] = self.inputs if entry else ()
        self.agent_inputs: tuple[Guardrail, ...] = () if entry else self.inputs
        if not tools:
            self.wrap_tool = None  # type: ignore[assignment]

    @classmethod
    def merge_all(cls, found: Sequence[Capability]) -> Capability:
        """The agent's and the network's guardrails as one set (see the module docstring)."""
        parts = [part for part in found if isinstance(part, Guardrails)]
        merged = cls(tools=any(part.tools for part in parts))
        own = [part for part in parts if not part.entry]
        network = [part for part in parts if part.entry]
        merged.entry_inputs = tuple(g for part in network for g in part.entry_inputs)
        merged.agent_inputs = tuple(g for part in own for g in part.agent_inputs)
        merged.outputs = tuple(g for part in [*own, *network] for g in part.outputs)
        return merged

    def _due(self, call: AgentCall) -> _Due:
        ctx = call.run
        inputs: list[Guardrail] = []
        if (
            not ctx.engine.continues and not ctx.engine.resume
        ):  # a continuation's input was checked already
            if ctx.call_count == 0:
                inputs.extend(self.entry_inputs)
            name = call.agent.name
            log = ctx.engine.guardrails
            if self.agent_inputs and (log is None or name not in log.inputs_checked):
                log_of(ctx).inputs_checked.add(name)
                inputs.extend(self.agent_inputs)
        return _Due(inputs, self.outputs)

    async def wrap_call(
        self, call: AgentCall, proceed: Callable[[], Awaitable[InferenceResult]]
    ) -> InferenceResult:
        call.note(Guardrails, lambda: self._due(call))
        kv: Any = call.run.state.kv
        mark = kv.savepoint()
        try:
            result = await proceed()
        except RunStopped:
            kv.rollback(mark)  # nothing of the stopped call stays: state, ops, provenance
            raise
        except BaseException:
            kv.release(mark)
            raise
        kv.release(mark)
        return result

    async def wrap_model(
        self, call: AgentCall, request: ModelRequest, proceed: ModelProceed
    ) -> ModelResponse:
        due = call.note(Guardrails, lambda: self._due(call))
        if not due.inputs:
            return await proceed(request)
        ctx = call.run

        async def ask() -> ModelResponse:
            return await proceed(request)

        def discard(response: ModelResponse) -> None:  # a tripped call's answer was paid for
            log_of(ctx).discarded.extend(call.requests)
            ctx.add_usage(response.usage)

        answer: ModelResponse = await check_beside(
            ctx, due.inputs, ctx.input, call.agent.name, ask, discard
        )
        return answer

    async def output(self, call: AgentCall, value: Any) -> Any:
        due = call.note(Guardrails, lambda: self._due(call))
        if due.outputs:
            name = call.agent.name
            trip = await run_guardrails(call.run, due.outputs, value, agent=name)
            if trip is not None:
                raise tripped_error(call.run, *trip, agent=name)
        return value

    async def wrap_tool(
        self, use: ToolUse, proceed: Callable[[], Awaitable[ToolCallRecord]]
    ) -> ToolCallRecord:
        checks = getattr(use.tool, "guardrails", None)
        if checks is None:
            return await proceed()
        return await guarded_call(use.run, use.agent.name, checks, use.tool, use.call, proceed)

    def __repr__(self) -> str:
        return (
            f"Guardrails(inputs={[g.name for g in self.inputs]}, "
            f"outputs={[g.name for g in self.outputs]})"
        )
