"""What the consumers of a resumed run see: a STATE_SNAPSHOT, then the remaining steps.

A resumed workflow executes the run again from its start, replaying recorded steps; the
events of that replay were already delivered by the attempt that crashed (or went nowhere).
The gate drops them. The first step that really runs opens it: it sends a STATE_SNAPSHOT of
the state rebuilt so far and a STEP_STARTED for the agent call under way, then lets every
event through. A run whose steps were all recorded opens it on its final event.

The run's event log is the first of the gate's sinks: before the run's final event
(RUN_FINISHED or RUN_ERROR) goes to the others, the log has written it, and the router
decisions still deferred before it (`network.durable.steps`: they ride on the step after them,
and the run's last decision rides on the log's last write: `EventLog.carrier`). A reader that
saw the run end finds every step of it recorded.

The run's RUN_STARTED, dropped like the rest, is handed to the run's event log: when no
execution before this one wrote any event to the log, it is the stream's first event still.
"""

from __future__ import annotations

from collections.abc import Sequence

from network.durable.event_log import EventLog
from network.run.context import RunContext
from network.run.emitter import EventSink
from network.run.events import (
    RunError,
    RunEvent,
    RunFinished,
    RunStarted,
    StateSnapshot,
    StepStarted,
)

FINAL = (RunFinished, RunError)


class ReplayGate:
    """An event sink in front of the run's consumers; closed while the run replays.

    It reads the run's typed events (subscribe it as a `Listener`) and hands them to `sinks`,
    sinks of typed events (the event log first, then a caller's sinks through their AG-UI
    encoding).
    """

    def __init__(
        self, sinks: Sequence[EventSink], *, is_open: bool, log: EventLog | None = None
    ) -> None:
        self.sinks = list(sinks)
        self.is_open = is_open
        self.ctx: RunContext | None = None  # the run, once its first step is routed
        self.log = log  # the run's event log (one of `sinks`), told of a replayed RUN_STARTED

    async def open(self, ctx: RunContext | None) -> None:
        """Let events through, after a snapshot of the state the run resumes from."""
        self.is_open = True
        ctx = ctx if ctx is not None else self.ctx
        if ctx is None:
            return
        await self._send(StateSnapshot(ctx.state.snapshot()))
        for name in ctx.engine.emitter.open_steps:
            await self._send(StepStarted(name))

    async def __call__(self, event: RunEvent) -> None:
        if self.is_open:  # nearly every event: straight to the sinks (`_send`, inlined)
            for sink in self.sinks:
                await sink(event)
            return
        if isinstance(event, RunStarted) and self.log is not None:
            self.log.keep_start(event)
        if not isinstance(event, FINAL):
            return
        await self.open(None)
        await self._send(event)

    async def _send(self, event: RunEvent) -> None:
        for sink in self.sinks:
            await sink(event)
