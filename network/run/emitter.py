"""The run's event channel.

The run loop and agent calls report what happens as AG-UI events (the `ag-ui-protocol`
package's models). Streaming, logging and persistence subscribe as sinks. With no sink
attached, `active` is False and no event object is ever built, so a plain `network.run` pays
nothing for observability. The emitter remembers which steps, messages and tool calls are
open, so that a failed or cancelled run can close them before its final event.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from network.errors import ConfigurationError
from network.history.fixed_list import FixedList
from network.state.kv import KV

NOTHING: list[Any] = FixedList()

EventSink = Callable[[Any], Awaitable[None]]
AnySink = Callable[[Any], Any]
"""What `sinks=` takes: `sink(event)`, an async function or a plain one (a plain one runs on
the event loop: keep it quick)."""


class Emitter:
    """Fans events out to sinks, in order, awaiting each one."""

    __slots__ = ("active", "open_messages", "open_reasoning", "open_steps", "open_tools", "sinks")

    def __init__(self, sinks: list[AnySink] | None = None) -> None:
        self.active = False
        # Without a sink nothing is ever open: the lists are one shared empty FixedList
        # until a sink comes (four lists fewer per run for the garbage collector to scan).
        self.sinks: list[EventSink] = NOTHING
        self.open_steps: list[str] = NOTHING
        self.open_messages: list[str] = NOTHING
        self.open_tools: list[str] = NOTHING
        self.open_reasoning: list[str] = NOTHING  # reasoning messages streaming (their ids)
        for sink in sinks or ():
            self.add_sink(sink)

    def add_sink(self, sink: AnySink) -> None:
        """Subscribe another sink."""
        if not self.active:
            self.sinks, self.open_steps, self.open_messages, self.open_tools = [], [], [], []
            self.open_reasoning = []
            self.active = True
        self.sinks.append(as_async(sink))

    async def emit(self, event: Any) -> None:
        """Send one event to every sink."""
        for sink in self.sinks:
            await sink(event)

    async def flush_state(self, kv: KV) -> None:
        """Emit a STATE_DELTA with the operations recorded since the previous one, if any."""
        delta = kv.unpublished_ops()
        if delta and self.active:
            from network import events  # noqa: PLC0415 (ag_ui: only runs with a sink load it)

            await self.emit(events.state_delta(delta))


def as_async(sink: AnySink) -> EventSink:
    """`sink` as an async function; a plain function is wrapped, anything else refused."""
    if not callable(sink):
        raise ConfigurationError(f"event sink {sink!r} is not callable")
    if inspect.iscoroutinefunction(sink) or inspect.iscoroutinefunction(
        getattr(sink, "__call__", None)  # noqa: B004 - a callable object's async __call__
    ):
        return sink

    async def call(event: Any) -> None:
        result = sink(event)
        if inspect.isawaitable(result):  # a plain function returning a coroutine
            await result

    return call
