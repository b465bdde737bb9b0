"""`FollowHandoffs`: the router of a network whose agents hand off and that names no router.

`Network(agents=[triage, faq, booking])` with no `router=` runs like the OpenAI Agents SDK's
runner: the agent that has the conversation answers, handing it on with `transfer_to_<agent>`
calls (see `agents.handoff`), until one answers without calling a tool.

- The run's first call goes to the agent that has the conversation (`ctx.active_agent`: on a
  thread, the agent a handoff left it with on an earlier turn), or to the first agent of the
  network on a new conversation (or when that agent has left the network).
- After a call that handed off, the target runs.
- After a call that asked for other tools, the same agent runs again to read their results.
- After an answer without tool calls, the run finishes.
"""

from __future__ import annotations

from typing import Any

from network.run.context import RunContext


class FollowHandoffs:
    """The default router of a network with handoffs (see the module docstring).

    Args:
        entry: the agent a new conversation starts with.
    """

    kind = "handoffs"

    def __init__(self, entry: str) -> None:
        self.entry = entry

    def __call__(self, ctx: RunContext) -> Any:
        last = ctx.last_result
        if last is None:
            active = ctx.active_agent
            return active if active is not None and active in ctx.network.agents else self.entry
        if last.handoff is not None and last.branch is None:
            return last.handoff.target
        if last.tool_calls and not last.skipped:
            return last.agent
        return None

    def __repr__(self) -> str:
        return f"FollowHandoffs(entry={self.entry!r})"
