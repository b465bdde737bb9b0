"""What a handoff's target is sent: the source's `input_filter` applied to the conversation as
it stood at the handoff (a capability every agent of a network with handoffs runs, before any
other at the request stage, since it is what the others see)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, ClassVar

from agents.capabilities.handoffs._tools import HandoffTools
from network.errors import ConfigurationError
from network.history.messages import check_messages
from network.run.agent_call import AgentCall
from network.run.capability import Capability
from network.run.context import AgentLike, RunContext


class HandoffInput(Capability):
    """Applies handoffs' `input_filter`s for their targets (brought to the network by
    `Handoffs.for_network`)."""

    order: ClassVar[int] = -100  # first: the history it shapes is what the others read

    async def request(self, call: AgentCall) -> None:
        if call.run.last_result is not None:
            call.history = await handed_history(call.agent, call.run, call.history)

    def __repr__(self) -> str:
        return "HandoffInput()"


HANDOFF_INPUT = HandoffInput()
"""The one instance every agent with handoffs brings to its network."""


def _tools_of(agent: AgentLike | None) -> HandoffTools | None:
    """The `transfer_to_...` tools `agent` offers now, if it has handoffs."""
    for capability in getattr(agent, "capabilities", ()):
        tools = getattr(capability, "tools_now", None)
        if callable(tools):
            found = tools()
            if isinstance(found, HandoffTools):
                return found
    return None


async def handed_history(agent: AgentLike, ctx: RunContext, history: Any) -> Any:
    """The history `agent` is sent: `history` as it is, unless a handoff in this run handed
    the agent the conversation with an `input_filter`; then the filter's view of the
    conversation up to the handoff, and whole what came after it."""
    results = ctx.state.results
    count = len(results)
    own = 0  # messages the agent's own calls added since the handoff
    for back in range(1, min(ctx.call_count, count) + 1):
        result = results[count - back]
        made = result.handoff
        if made is None and result.agent == agent.name and result.branch is None:
            if not result.skipped:
                own += len(result.output) + len(result.tool_calls)
            continue
        if made is None or made.target != agent.name:
            return history
        tools = _tools_of(ctx.network.agents.get(made.source))
        spec = tools.spec_for(agent.name) if tools is not None else None
        if spec is None or spec.input_filter is None:
            return history
        messages = list(history)
        cut = len(messages) - own
        try:
            kept = spec.input_filter(messages[:cut])
            if inspect.isawaitable(kept):
                kept = await kept
        except Exception as exc:  # the run fails with it, as with a guardrail that raises
            exc.add_note(
                f"in the input_filter of the handoff from {made.source!r} to {agent.name!r}"
            )
            raise
        if isinstance(kept, str) or not isinstance(kept, Sequence):
            raise ConfigurationError(
                f"handoff from {made.source!r} to {agent.name!r}: input_filter must return a "
                f"list of messages, got {type(kept).__name__}"
            )
        try:
            kept = check_messages(kept)  # dicts become messages; anything else is refused
        except ValueError as exc:  # pydantic's ValidationError names the message and field
            raise ConfigurationError(
                f"handoff from {made.source!r} to {agent.name!r}: input_filter returned a "
                f"message that is not one: {exc}"
            ) from exc
        return [*kept, *messages[cut:]]
    return history
