"""The span of a handoff: `handoff {target}`, under the `transfer_to_...` tool call that made it.

The GenAI conventions name no handoff operation, so the span says what happened in names of
our own: its role (`agent_network.role` "handoff"), the agent that handed the conversation
over (`gen_ai.agent.name` and `agent_network.handoff.source`), the one that has it now
(`agent_network.handoff.target`) and the tool call (`gen_ai.tool.call.id`). It spans the tool
call's time: the handoff is made when the call succeeds. The model's `reason` is content,
recorded (on the tool span) only when content is captured.
"""

from __future__ import annotations

from typing import Any

from network.telemetry import conventions as c


def handoff_span(tracer: Any, parent: Any, handoff: Any, start: int, end: int) -> None:
    """Write the span of `handoff` (a `HandoffRecord`) under `parent`, from `start` to `end`
    (nanoseconds since the epoch)."""
    span = tracer.start_span(
        f"{c.HANDOFF} {handoff.target}",
        context=parent,
        attributes={
            c.ROLE: c.HANDOFF,
            c.AGENT_NAME: handoff.source,
            c.HANDOFF_SOURCE: handoff.source,
            c.HANDOFF_TARGET: handoff.target,
            c.TOOL_CALL_ID: handoff.call_id,
        },
        start_time=start,
    )
    span.end(end_time=end)
