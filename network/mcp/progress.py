"""Progress of a served run, told to an MCP caller that asked for it.

A `tools/call` whose `_meta` carries a `progressToken` gets a `notifications/progress` each
time an agent call of the run ends: `progress` counts the agent calls finished so far, and
the message names the agent (`writer finished`); no `total` is sent, since a router decides
as the run goes how many calls there will be. The sink watches every served run (an
`Observer`: it never makes a model stream); the SDK sends nothing to a caller that gave no
token, and nothing is sent once the caller cancelled the call (`notifications/cancelled`):
the agent call its run was in is closed as the run ends, but the request is no longer under
way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from network.run.emitter import Observer
from network.run.events import RunEvent, StepFinished


def progress_sinks(mcp_request: Any) -> list[Observer]:
    """The sink that tells the caller of `mcp_request` (the SDK's `ServerRequestContext`)
    the run's progress; the SDK sends nothing when the caller gave no progress token."""
    session = getattr(mcp_request, "session", None)
    report = getattr(session, "report_progress", None)
    if report is None:
        return []
    # set by the caller's notifications/cancelled: the SDK's per-request channel (no public
    # accessor on the session; read, never changed, and without it progress goes on as before)
    channel = getattr(session, "_request_outbound", None)
    cancelled = getattr(channel, "cancel_requested", None)

    async def step(done: int, message: str) -> None:
        # A cancelled call's run closes its open agent call as it ends; the caller stopped
        # waiting, and MCP allows progress only for a request still under way.
        if cancelled is not None and cancelled.is_set():
            return
        await report(float(done), None, message)

    return [Observer(_StepsFinished(step))]


class _StepsFinished:
    """Counts the run's finished agent calls and reports each one."""

    def __init__(self, report: Callable[[int, str], Awaitable[None]]) -> None:
        self._report = report
        self._finished = 0

    async def __call__(self, event: RunEvent) -> None:
        if isinstance(event, StepFinished) and event.subagent_run_id is None:
            self._finished += 1
            await self._report(self._finished, f"{event.name} finished")
