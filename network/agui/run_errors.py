"""What an AG-UI client learns when a run fails: RUN_ERROR, screened by the serving layer.

The library's own errors reach the client as they are; any other exception is logged in full
(`agui.run_failed` on the `agent_network.agui` logger, with a reference) and the client reads
only `internal error (reference err_...)` with code `internal_error`
(`network.serving.screening`).

The run's own RUN_ERROR is built before the exception reaches the server, so `ErrorScreen`
holds it back and sends the client's version once the exception is known.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from network import events
from network.run.emitter import EventSink
from network.serving.screening import INTERNAL_ERROR, screened

LOGGER = "agent_network.agui"

__all__ = ["INTERNAL_ERROR", "LOGGER", "ErrorScreen"]


class ErrorScreen:
    """A sink passing every event on to `sink` except RUN_ERROR, which `report` sends.

    `stopped`: when it says the run was stopped from outside (its lease lost), the run's
    RUN_FINISHED (a cancelled run's) is held back too, and `report` sends the RUN_ERROR of the
    error that stopped it instead.
    """

    def __init__(self, sink: EventSink, stopped: Callable[[], bool] | None = None) -> None:
        self.sink = sink
        self.stopped = stopped
        self.held: Any = None

    async def __call__(self, event: Any) -> None:
        kind = event.type
        if kind == "RUN_ERROR" or (
            kind == "RUN_FINISHED" and self.stopped is not None and self.stopped()
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
        await self.sink(events.run_error(message, code=code))
