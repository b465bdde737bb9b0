"""What an AG-UI client learns when a run fails: RUN_ERROR, screened by the serving layer.

The library's own errors reach the client as they are; any other exception is logged in full
(`agui.run_failed` on the `agent_network.agui` logger, with a reference) and the client reads
only `internal error (reference err_...)` with code `internal_error`
(`network.serving.screening`).

The run's own `RunError` is emitted before the exception reaches the server, so `ErrorScreen`
(a sink of the run's typed events, in front of the AG-UI encoder) holds it back and sends the
client's version once the exception is known.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from network.run.emitter import EventSink
from network.run.events import RunError, RunEvent, RunFinished
from network.serving.screening import INTERNAL_ERROR, screened

LOGGER = "agent_network.agui"

__all__ = ["INTERNAL_ERROR", "LOGGER", "ErrorScreen"]


class ErrorScreen:
    """A sink of typed events passing every event on to `sink` except `RunError`, which
    `report` sends.

    `stopped`: when it says the run was stopped from outside (its lease lost), the run's
    `RunFinished` (a cancelled run's) is held back too, and `report` sends the `RunError` of
    the error that stopped it instead.
    """

    def __init__(self, sink: EventSink, stopped: Callable[[], bool] | None = None) -> None:
        self.sink = sink
        self.stopped = stopped
        self.held: Any = None

    async def __call__(self, event: RunEvent) -> None:
        if isinstance(event, RunError) or (
            isinstance(event, RunFinished) and self.stopped is not None and self.stopped()
        ):
            self.held = event
            return
        await self.sink(event)

    async def report(self, error: BaseException, run_id: str) -> None:
        """Send the RUN_ERROR the client may see for `error` (if the run reported one)."""
        if self.held is None:
            return
        self.held = None
        message, code = screened(error, logger=LOGGER, event="agui.run_failed", run_id=run_id)
        await self.sink(RunError(message, code=code))
