"""Handoffs as AG-UI sub-agents: the target agent's work, attributed to it.

A handoff (`agents.handoff`: a `transfer_to_<name>` tool call) makes another agent of the same
run the active one; the run streams a CUSTOM `Handoff` event (`network.events.HandoffEvent`)
after the call's result. A client showing who does what (AG-UI 1.0's sub-agents) is told more
by the server, between the run's events and the wire:

- when the target's first agent call starts (its STEP_STARTED), SUBAGENT_STARTED with a new
  `subagentRunId`, the target's name and description, and `parentToolCallId` (the transfer
  call);
- every event of the target's agent calls (its steps, text, reasoning and tool calls, a
  sub-run's SUBAGENT_STARTED) carries that `subagentRunId`; consecutive calls of the target
  stay in it;
- SUBAGENT_FINISHED when another agent's call starts, when the target hands off in turn (the
  next target's work is a sub-agent of its own), or before RUN_FINISHED: "suspended" with
  the ids of the interrupts its calls wait on (those interrupts carry its `subagentRunId`
  too), else successful. SUBAGENT_ERROR before RUN_ERROR.

Decisions where the protocol is silent: a handoff whose target never runs in the run (the run
stopped first) opens no sub-agent; state events stay the run's (the state is one, whoever
writes it); the events of a run that continues a conversation with the active agent, without
a handoff in that run, are not attributed (no handoff, no sub-agent).
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import (
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
)

from network import events
from network.ids import new_id
from network.run.context import NetworkLike
from network.run.emitter import EventSink

_RUN_SCOPED = (
    RunStartedEvent,
    RunFinishedEvent,
    RunErrorEvent,
    StateSnapshotEvent,
    StateDeltaEvent,
)
_OWN_LIFECYCLE = (SubagentFinishedEvent, SubagentErrorEvent)


class HandoffSubagents:
    """A sink of AG-UI models (after the encoder: `network.run.agui_encoder`) that turns
    handoffs into sub-agents on their way to `sink` (see the module)."""

    __slots__ = ("_active", "_descriptions", "_pending", "sink")

    def __init__(self, sink: EventSink, network: NetworkLike) -> None:
        self.sink = sink
        self._descriptions = {
            name: getattr(agent, "description", "") or None
            for name, agent in getattr(network, "agents", {}).items()
        }
        self._pending: dict[str, str] = {}  # target agent -> the transfer call's id
        self._active: tuple[str, str] | None = None  # (subagentRunId, target) streaming now

    async def __call__(self, event: Any) -> None:
        if isinstance(event, StepStartedEvent) and event.subagent_run_id is None:
            await self._step(event.step_name)
        elif isinstance(event, RunFinishedEvent):
            event = await self._finish_run(event)
        elif isinstance(event, RunErrorEvent) and self._active is not None:
            run_id, _ = self._active
            self._active = None
            await self.sink(events.subagent_error(run_id, event.message, event.code))
        active = self._active
        if active is not None and not isinstance(event, _RUN_SCOPED):
            event = _attributed(event, active[0])
        await self.sink(event)
        if isinstance(event, events.HandoffEvent):  # the target's call opens its sub-agent
            self._pending[event.target_agent] = event.tool_call_id

    async def _step(self, agent: str) -> None:
        """An agent call starts: the sub-agent it belongs to, opened or closed."""
        active = self._active
        call_id = self._pending.pop(agent, None)
        if active is not None and (call_id is not None or active[1] != agent):
            self._active = None
            await self.sink(events.subagent_finished(active[0]))
        if call_id is not None:
            run_id = new_id("sub_")
            self._active = (run_id, agent)
            await self.sink(
                events.subagent_started(
                    run_id,
                    agent,
                    description=self._descriptions.get(agent),
                    parent_tool_call_id=call_id,
                )
            )

    async def _finish_run(self, event: Any) -> Any:
        """Close the sub-agent streaming now; its interrupts name it."""
        active = self._active
        if active is None:
            return event
        self._active = None
        run_id, agent = active
        outcome: Any = getattr(event, "outcome", None)
        waiting = [
            interrupt
            for interrupt in getattr(outcome, "interrupts", None) or ()
            if (interrupt.metadata or {}).get("agent") == agent
            and interrupt.subagent_run_id is None
        ]
        if waiting:
            interrupts = [
                item.model_copy(update={"subagent_run_id": run_id})
                if any(item is held for held in waiting)
                else item
                for item in outcome.interrupts
            ]
            event = event.model_copy(
                update={"outcome": outcome.model_copy(update={"interrupts": interrupts})}
            )
        ids = [interrupt.id for interrupt in waiting] or None
        await self.sink(events.subagent_finished(run_id, interrupt_ids=ids))
        return event


def _attributed(event: Any, run_id: str) -> Any:
    """`event` carrying `run_id` (a copy), unless it carries one of its own already."""
    if isinstance(event, SubagentStartedEvent):  # a sub-run the target started: nested under it
        if event.parent_subagent_run_id is None:
            return event.model_copy(update={"parent_subagent_run_id": run_id})
        return event
    if isinstance(event, _OWN_LIFECYCLE) or getattr(event, "subagent_run_id", None) is not None:
        return event
    if "subagent_run_id" not in type(event).model_fields:
        return event
    return event.model_copy(update={"subagent_run_id": run_id})
