"""The run's event channel.

The run loop and agent calls report what happens as AG-UI events (the `ag-ui-protocol`
package's models). Streaming, logging and persistence subscribe as sinks. With no sink
attached, `active` is False and no event object is ever built, so a plain `network.run` pays
nothing for observability. The emitter remembers which steps, messages and tool calls are
open, so that a failed or cancelled run can close them before its final event.

Sinks that only watch a run (telemetry, logs, a thread's commits) are subscribed as an
`Observer`: they see every event, but only a sink that reads the answer as it is generated
(`network.stream`, the AG-UI server, a caller's `sinks=`) sets `streaming`, the one thing that
makes an agent ask its model to stream. Turning tracing or logging on never changes what is
sent to a model.
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


class Observer:
    """A sink that only watches a run: subscribed through it, the sink gets every event but
    never makes a model request stream (see the module docstring)."""

    __slots__ = ("sink",)

    def __init__(self, sink: AnySink) -> None:
        self.sink = sink


class Emitter:
    """Fans events out to sinks, in order, awaiting each one.

    `active`: some sink is subscribed (events are built at all). `streaming`: some sink that
    is not an `Observer` is, so a model's answer is worth streaming as it is generated.
    """

    __slots__ = (
        "active",
        "open_messages",
        "open_reasoning",
        "open_steps",
        "open_tools",
        "sinks",
        "streaming",
    )

    def __init__(self, sinks: list[AnySink | Observer] | None = None) -> None:
        self.active = False
        self.streaming = False
        # Without a sink nothing is ever open: the lists are one shared empty FixedList
        # until a sink comes (four lists fewer per run for the garbage collector to scan).
        self.sinks: list[EventSink] = NOTHING
        self.open_steps: list[str] = NOTHING
        self.open_messages: list[str] = NOTHING
        self.open_tools: list[str] = NOTHING
        self.open_reasoning: list[str] = NOTHING  # reasoning messages streaming (their ids)
        for sink in sinks or ():
            self.add_sink(sink)

    def add_sink(self, sink: AnySink | Observer) -> None:
        """Subscribe another sink (one wrapped in `Observer` leaves `streaming` as it is)."""
        if not self.active:
            self.sinks, self.open_steps, self.open_messages, self.open_tools = [], [], [], []
            self.open_reasoning = []
            self.active = True
        if isinstance(sink, Observer):
            sink = sink.sink
        else:
            self.streaming = True
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
