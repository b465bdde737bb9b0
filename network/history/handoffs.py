"""`HandoffRecord`: an agent handed the conversation to another; and who has it now.

A handoff is a tool call (`transfer_to_<agent>`, see `agents.handoff`) that changes the active
agent. The agent call that made it carries its record (`InferenceResult.handoff`); routers read
it as `ctx.handoff`, and a thread's next turn starts with the agent the history says has the
conversation (`active_agent`). Nothing else is stored: the record travels with its call into
every thread store, so which agent is active is read back from history, never from a state key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from network.history.record import Record


@dataclass(slots=True)
class HandoffRecord(Record):
    """One handoff, as history keeps it.

    Attributes:
        source: the agent that handed off.
        target: the agent it handed the conversation to.
        reason: why, as the model said it in the call's `reason` argument ("" when it gave none).
        call_id: the id of the `transfer_to_...` tool call.
    """

    source: str
    target: str
    reason: str = ""
    call_id: str = ""


def active_agent(results: Sequence[Any]) -> str | None:
    """The agent that has the conversation after `results` (a thread's or a run's agent calls).

    The target of the last call's handoff when it made one, else the agent of the last call;
    calls of a parallel fan-out's branches (which run side by side, none of them in charge)
    are passed over. None when no agent has been called yet.
    """
    for index in range(len(results) - 1, -1, -1):
        result = results[index]
        if result.branch is not None:
            continue
        handoff = result.handoff
        return str(handoff.target if handoff is not None else result.agent)
    return None
