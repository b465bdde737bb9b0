"""The handoffs capability: `Agent(handoffs=[...])` offers one `transfer_to_<agent>` tool per
target, makes at most one handoff per answer, and records the one it made.

Stages: request (the transfer tools join the tools offered), tool calls (an answer's second
handoff is refused, an error result the model reads), record (`InferenceResult.handoff`, and
a HANDOFF event when the run has sinks). Its network part, `HandoffInput`, applies the
handoffs' `input_filter`s to what their targets are sent.
"""

from __future__ import annotations

from typing import Any

from agents.capabilities.handoffs._tools import HandoffTools
from agents.capabilities.handoffs.input_filter import HANDOFF_INPUT
from agents.capabilities.handoffs.options import coerce_handoffs
from network.history.messages import ToolCall
from network.history.results import InferenceResult
from network.run.agent_call import AgentCall
from network.run.capability import Capability
from network.run.events import Handoff


class Handoffs(Capability):
    """An agent's handoffs. `items` is the agent's own list (`Agent.handoffs`): what the
    application appends to it later is offered too."""

    def __init__(self, owner: str, items: list[Any], taken: Any) -> None:
        self.owner = owner
        self.items = coerce_handoffs(owner, items)
        self._taken = taken  # `fn() -> names` of the agent's other tools (a clash is refused)
        self._tools: HandoffTools | None = None
        if self.items:
            self.tools_now()  # a clash of tool names is an error here, not mid-run

    def tools_now(self) -> HandoffTools:
        """The `transfer_to_...` tools of `items` as the list is now (rebuilt when items were
        added or removed since the last call)."""
        built = self._tools
        if built is None or built.key != tuple(id(item) for item in self.items):
            built = self._tools = HandoffTools(self.owner, self.items, self._taken())
        return built

    @property
    def targets(self) -> tuple[str, ...]:
        """The names of the agents this one may hand off to."""
        return tuple(spec.target for spec in self.tools_now().by_tool.values())

    def for_network(self) -> Capability:
        return HANDOFF_INPUT

    async def request(self, call: AgentCall) -> None:
        if not self.items:
            return
        tools = self.tools_now()
        call.tools = {**(call.tools or {}), **tools.tools}
        call.schemas = [*(call.schemas or ()), *tools.schemas]

    async def tool_calls(self, call: AgentCall, calls: list[ToolCall]) -> list[ToolCall]:
        if len(calls) < 2 or not self.items:
            return calls
        kept, refused = self.tools_now().refuse_extra(calls)
        for record in refused.values():
            call.set_aside(record)
        return kept

    async def record(self, call: AgentCall, result: InferenceResult) -> InferenceResult:
        if not self.items:
            return result
        handed = self.tools_now().record_of(self.owner, call.records or ())
        if handed is None:
            return result
        result.handoff = handed
        emitter = call.run.engine.emitter
        if emitter.active:
            await emitter.emit(Handoff(handed.source, handed.target, handed.call_id, handed.reason))
        return result

    def __repr__(self) -> str:
        return f"Handoffs({self.owner!r}, {self.items!r})"
