"""What a client learns when a run fails: the library's own messages, nothing else.

The library's errors (`AgentNetworkError` subclasses) are written to be read: they name the
state key, tool or agent at fault, so RUN_ERROR carries them as they are. Any other exception
(a router's, a store's, a hook's) may hold anything: a connection string, a token, a stack of
someone else's code. Its RUN_ERROR says only `internal error (reference err_...)` with code
`internal_error`; the server logs the whole exception, traceback included, under the same
reference so an operator can find it.

The run's own RUN_ERROR is built before the exception reaches the server, so `ErrorScreen`
holds it back and sends the client's version once the exception is known.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import structlog

from network import events
from network.errors import AgentNetworkError
from network.ids import new_id
from network.logger import LazyLogger
from network.run.emitter import EventSink

INTERNAL_ERROR = "internal_error"
LOGGER = "agent_network.agui"

log = LazyLogger(LOGGER)


def log_failure(error: BaseException, run_id: str, reference: str) -> None:
    """The whole exception, traceback included, wherever the application sends its logs."""
    if structlog.is_configured():
        log.error("agui.run_failed", run_id=run_id, reference=reference, exc_info=error)
    else:  # stdlib logging: its handlers format the traceback themselves
        logging.getLogger(LOGGER).error(
            "agui.run_failed run_id=%s reference=%s", run_id, reference, exc_info=error
        )


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
        event = self.held
        if event.type == "RUN_FINISHED":  # stopped from outside: the error says why
            name = type(error).__name__
            event = events.run_error(f"{name}: {error}", code=name)
        if not isinstance(error, AgentNetworkError):
            reference = new_id("err_")
            log_failure(error, run_id, reference)
            event = events.run_error(
                f"internal error (reference {reference}); the server's log has the details",
                code=INTERNAL_ERROR,
            )
        self.held = None
        await self.sink(event)
