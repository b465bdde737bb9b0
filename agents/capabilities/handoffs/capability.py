"""The handoffs capability: `Agent(handoffs=[...])` offers one `transfer_to_<agent>` tool per
target, makes at most one handoff per answer, and records the one it made.

Stages: request (the transfer tools join the tools offered), tool calls (an answer's second
handoff is refused, an error result the model reads; so is every handoff asked for inside a
`Parallel` branch), record (`InferenceResult.handoff`, and
a HANDOFF event when the run has sinks), resume (a handoff made beside a tool call held for a
person takes effect when that call is answered: see `wrap_resume`). Its network part,
`HandoffInput`, applies the handoffs' `input_filter`s to what their targets are sent.

Inside a `Parallel` branch a handoff is refused (error type `HandoffInParallelBranch`, its
message naming the branch), and the branch goes on: the model reads the refusal and answers
itself. A branch is one of several running side by side on a fork of the state: none of them
has the conversation to hand on, and two branches handing off to two agents could not both be
followed. Before, the transfer was made, recorded and announced (the model told "Transferred")
and then never followed, leaving the branch with no answer (decision: refused where it is
asked, as an answer's second handoff is, rather than accepted and silently dropped).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.capabilities.handoffs._tools import HandoffTools
from agents.capabilities.handoffs.input_filter import HANDOFF_INPUT
from agents.capabilities.handoffs.options import coerce_handoffs
from network.history.handoffs import HandoffRecord
from network.history.messages import ToolCall, ToolMessage
from network.history.results import InferenceResult
from network.run.agent_call import AgentCall
from network.run.capability import Capability, ResumeProceed
from network.run.context import RunContext
from network.run.events import Handoff
from network.run.interrupts import Answer, Interrupt


class Handoffs(Capability):
    """An agent's handoffs. `items` is the agent's own list (`Agent.handoffs`): what the
    application appends to it later is offered too."""

    def __init__(self, owner: str, items: Sequence[Any], taken: Any) -> None:
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
        if not self.items:
            return calls
        branch = call.run.branch
        if branch is not None:  # refused, not made and then ignored (see the module docstring)
            kept, refused = self.tools_now().refuse_in_branch(calls, branch.id)
        elif len(calls) < 2:
            return calls
        else:
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

    async def wrap_resume(
        self, run: RunContext, answered: list[tuple[Interrupt, Answer]], proceed: ResumeProceed
    ) -> InferenceResult:
        """A handoff made in the answer whose other calls waited for a person was recorded on
        the call that stopped, before the router could follow it. The call ends when they
        are answered: its end (this result) carries the handoff, so the router follows it and
        a thread's next turn starts with the target, as if nothing had waited (the model was
        already told the transfer was made). No second event: it was sent when made."""
        result = await proceed(answered)
        if self.items and result.handoff is None:
            result.handoff = _handoff_held(run, self.tools_now(), self.owner, answered)
        return result

    def __repr__(self) -> str:
        return f"Handoffs({self.owner!r}, {self.items!r})"


def _handoff_held(
    run: RunContext, tools: HandoffTools, owner: str, answered: list[tuple[Interrupt, Answer]]
) -> HandoffRecord | None:
    """The handoff made in `owner`'s answer that asked for the tool calls `answered` finishes:
    read from the conversation (a run continued in memory carries the stopped run's
    conversation, not its agent calls), the first transfer call of that answer whose result
    is not an error."""
    held = {interrupt.tool_call_id for interrupt, _ in answered}
    messages = list(run.state.messages)
    for at in range(len(messages) - 1, -1, -1):
        calls = getattr(messages[at], "tool_calls", None) or ()
        if not any(call.id in held for call in calls):
            continue
        succeeded = {
            message.tool_call_id
            for message in messages[at + 1 :]
            if isinstance(message, ToolMessage) and not message.is_error
        }
        for call in calls:
            spec = tools.by_tool.get(call.name)
            if spec is not None and call.id in succeeded:
                arguments = call.arguments if isinstance(call.arguments, dict) else {}
                reason = arguments.get("reason")
                return HandoffRecord(
                    owner, spec.target, reason if isinstance(reason, str) else "", call.id
                )
        return None
    return None
