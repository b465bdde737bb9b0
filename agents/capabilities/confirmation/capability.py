"""The confirmation capability: tool calls that wait for a person.

At the tool calls stage, the calls of `@tool(requires_confirmation=True)` tools are held back:
each gets an `Interrupt` (its proposed state change shown to the client as a STATE_DELTA, not
applied) and the run stops with stop reason "interrupted" once the others ran. See
`network.run.interrupts` for the whole flow; the answered calls are finished by the run that
answers them (`agents.resume`).

A call whose arguments are invalid, or whose proposed state the schema rejects, is not held:
nobody should be asked to confirm what cannot run. It goes on with the batch and fails there
before the tool's function is reached, so the model sees the error as usual.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.tools.tool import Tool
from network.errors import StateError, ToolError
from network.history.messages import ToolCall
from network.run.agent_call import AgentCall
from network.run.capability import Capability
from network.run.context import AgentLike, RunContext
from network.run.events import StateDelta
from network.run.interrupts import Interrupt
from network.run.predictive_config import predicted_values


class Confirmation(Capability):
    """Holds the calls of an agent's tools that need a person's confirmation."""

    async def tool_calls(self, call: AgentCall, calls: list[ToolCall]) -> list[ToolCall]:
        tools: Mapping[str, Tool] = call.tools or {}
        if not any(_confirming(tools.get(c.name)) for c in calls):
            return calls
        return await hold(call.run, call.agent, tools, calls)

    def __repr__(self) -> str:
        return "Confirmation()"


def _confirming(tool: Tool | None) -> bool:
    return tool is not None and tool.requires_confirmation


async def hold(
    ctx: RunContext, agent: AgentLike, tools: Mapping[str, Tool], calls: list[ToolCall]
) -> list[ToolCall]:
    """Record an interrupt for each call needing confirmation; return the calls to run now."""
    kv: Any = ctx.state.kv
    predict_state = ctx.network.predict_state
    checkpoint = ctx.state.snapshot()
    runnable: list[ToolCall] = []
    held: list[Interrupt] = []
    for call in calls:
        tool = tools.get(call.name)
        if tool is None or not tool.requires_confirmation:
            runnable.append(call)
            continue
        try:
            tool.validate(call.arguments)
            proposal = {}
            for key, value in predicted_values(predict_state, call):
                spec = kv.spec(key)
                proposal[key] = spec.to_json(spec.validate(value))
        except (ToolError, StateError):
            runnable.append(call)
            continue
        held.append(
            Interrupt(
                message=f"{agent.name} wants to run {call.name}: confirm or reject.",
                tool_call_id=call.id,
                tool=call.name,
                agent=agent.name,
                arguments=call.arguments,
                proposal=proposal,
                checkpoint=checkpoint,
            )
        )
    if held:
        ctx.engine.interrupts = (*ctx.engine.interrupts, *held)
        emitter = ctx.engine.emitter
        ops = [
            {"op": "add", "path": kv.spec(key).pointer, "value": value}
            for interrupt in held
            for key, value in interrupt.proposal.items()
            if kv.spec(key).persistent
        ]
        if emitter.active and ops:
            await emitter.emit(StateDelta(ops))  # the proposal, shown, not applied
    return runnable
