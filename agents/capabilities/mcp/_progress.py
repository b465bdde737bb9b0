"""Relaying an MCP server's `notifications/progress` to the run's live sinks.

A call made while the run has a sink (`network.stream`, the AG-UI server, `sinks=`, telemetry)
carries a progress token; each progress notification the server sends for it becomes a
`ToolCallProgress` event (AG-UI: CUSTOM "TOOL_CALL_PROGRESS", value `{"toolCallId", "tool",
"server", "progress", "total", "message"}`), between the call's TOOL_CALL_END and its
TOOL_CALL_RESULT.

The SDK runs the progress callback in its own task, per notification; the events are emitted
from the tool call's own task instead (`during`), so that they reach the sinks in the run's
order and a sink's failure is the run's, not the SDK's. The server is not trusted: a
notification whose progress is not a finite number above the last one's (the specification
says progress increases), or whose total is not finite, is dropped or loses its total; the
message is cut to `MAX_MESSAGE_CHARS`; and only the latest unsent notification is held, so a
server sending them faster than the sinks read them cannot make the run hold more than one.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable
from typing import Any, TypeVar

import anyio

from agents.tools.tool_context import ToolContext
from network.run.events import ToolCallProgress

MAX_MESSAGE_CHARS = 1000

T = TypeVar("T")


class ProgressRelay:
    """The progress of one tool call, from the SDK's callback to the run's emitter."""

    def __init__(self, emitter: Any, call_id: str, tool: str, server: str) -> None:
        self._emitter = emitter
        self._call = {"toolCallId": call_id, "tool": tool, "server": server}
        self._latest: dict[str, Any] | None = None
        self._last = -math.inf
        self._arrived = anyio.Event()
        self._done = False

    async def report(self, progress: float, total: float | None, message: str | None) -> None:
        """The SDK's progress callback: keep the notification if it is sane and new."""
        if not _finite(progress) or progress <= self._last or progress < 0:
            return
        self._last = progress
        self._latest = {
            **self._call,
            "progress": progress,
            "total": total if _finite(total) else None,
            "message": message[:MAX_MESSAGE_CHARS] if isinstance(message, str) else None,
        }
        self._arrived.set()

    async def during(self, call: Awaitable[T]) -> T:
        """Await `call`, emitting its progress as it comes, and the last of it once done
        (an event being emitted is finished, never cut off, when the call returns). The
        call's own failure leaves as it is (a `ToolError` the model reads), not wrapped in the
        task group's `ExceptionGroup`."""
        failure: Exception | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(self._forward)
            try:
                result = await call
            except Exception as exc:  # raised after the group, unwrapped
                failure = exc
            finally:
                self._done = True
                self._arrived.set()
        if failure is not None:
            raise failure
        return result

    async def _forward(self) -> None:
        while not self._done:
            await self._arrived.wait()
            self._arrived = anyio.Event()
            await self._flush()
        await self._flush()  # what came while the previous one was being emitted

    async def _flush(self) -> None:
        latest, self._latest = self._latest, None
        if latest is not None:
            await self._emitter.emit(ToolCallProgress(latest))


def progress_relay(context: ToolContext, tool: str, server: str) -> ProgressRelay | None:
    """A relay for the call in `context`, or None when nothing watches the run live."""
    run = context.run
    emitter = None if run is None else run.engine.emitter
    if emitter is None or not emitter.active:
        return None
    return ProgressRelay(emitter, context.tool_call_id, tool, server)


def _finite(number: Any) -> bool:
    real = isinstance(number, int | float) and not isinstance(number, bool)
    return real and math.isfinite(number)
