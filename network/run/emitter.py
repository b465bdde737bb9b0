"""The run's event channel.

The run loop and agent calls report what happens as typed events (`network.run.events`).
Streaming, logging and persistence subscribe as sinks. With no sink attached, `active` is
False and no event object is ever built, so a plain `network.run` pays nothing for
observability. The emitter remembers which steps, messages and tool calls are open, so that a
failed or cancelled run can close them before its final event.

Two kinds of sink:

- a caller's sink (`sinks=`, `network.stream`, a protocol server's writer) is given the AG-UI
  models of each event (`network.run.agui_encoder`): AG-UI is the edge, where a run leaves
  the library;
- the library's own consumers are subscribed as an `Observer` or a `Listener`, and read the
  typed events themselves.

Sinks that only watch a run (telemetry, logs, a thread's commits) are `Observer`s: they never
make an agent ask its model to stream. Only a sink that reads the answer as it is generated
(`network.stream`, the AG-UI server, a caller's `sinks=`, a `Listener`) sets `streaming`.
Turning tracing or logging on never changes what is sent to a model.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from network.errors import ConfigurationError
from network.history.fixed_list import FixedList
from network.run.events import ReasoningEnded, RunEvent, StateDelta, TextEnded, ToolCallEnded
from network.state.kv import KV

NOTHING: list[Any] = FixedList()

EventSink = Callable[[Any], Awaitable[None]]
AnySink = Callable[[Any], Any]
"""What `sinks=` takes: `sink(event)`, an async function or a plain one (a plain one runs on
the event loop: keep it quick)."""


class Observer:
    """One of the library's consumers that only watches a run: the sink gets every typed
    event (`network.run.events`) but never makes a model request stream."""

    __slots__ = ("sink",)
    streams = False

    def __init__(self, sink: AnySink) -> None:
        self.sink = sink


class Listener(Observer):
    """One of the library's consumers that reads the answer as it is generated: the sink gets
    every typed event, and the run's models stream (as for a caller's sink)."""

    __slots__ = ()
    streams = True


Sink = AnySink | Observer
"""A sink as a run takes it: a caller's (AG-UI models) or the library's own (typed events)."""


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

    def __init__(self, sinks: list[Sink] | None = None) -> None:
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

    def add_sink(self, sink: Sink) -> None:
        """Subscribe another sink: an `Observer` or `Listener` reads the typed events, any
        other sink their AG-UI models (see the module docstring)."""
        if not self.active:
            self.sinks, self.open_steps, self.open_messages, self.open_tools = [], [], [], []
            self.open_reasoning = []
            self.active = True
        self.streaming = self.streaming or not isinstance(sink, Observer) or sink.streams
        self.sinks.append(typed_sink(sink))

    async def emit(self, event: RunEvent) -> None:
        """Send one event to every sink."""
        for sink in self.sinks:
            await sink(event)

    async def close_messages(self) -> None:
        """Close every tool call and message still open: a call cut short (by an error, a
        cancellation, or a guardrail's trip) leaves none open for a client to wait on. Each
        closing event goes to each sink on its own (`best_effort`). A parallel branch's
        emitter closes its own only (`network.run.fork.BranchEmitter`)."""
        sinks = list(self.sinks)
        for call_id in list(self.open_tools):
            await best_effort(sinks, ToolCallEnded(call_id))
        for message_id in list(self.open_reasoning):
            await best_effort(sinks, ReasoningEnded(message_id))
        for message_id in list(self.open_messages):
            await best_effort(sinks, TextEnded(message_id))
        self.open_tools.clear()
        self.open_messages.clear()
        self.open_reasoning.clear()

    async def flush_state(self, kv: KV) -> None:
        """Emit a `StateDelta` with the operations recorded since the previous one, if any."""
        delta = kv.unpublished_ops()
        if delta and self.active:
            await self.emit(StateDelta(delta))


async def best_effort(sinks: list[EventSink], event: Any) -> None:
    """Send `event` to every sink, each on its own: one that is gone does not stop the rest."""
    for sink in sinks:
        # A closed stream or a failing sink cannot be told anything more.
        with contextlib.suppress(Exception):
            await sink(event)


def typed_sink(sink: Sink) -> EventSink:
    """`sink` as a sink of the run's typed events: an `Observer`'s (or `Listener`'s) own, any
    other through the AG-UI encoder (see the module docstring)."""
    if isinstance(sink, Observer):
        return as_async(sink.sink)
    from network.run.agui_encoder import agui_sink  # noqa: PLC0415 (ag_ui: only runs with such a sink load it)

    return agui_sink(as_async(sink))


def wrapped(sink: Sink, wrap: Callable[[EventSink], EventSink]) -> Observer:
    """`sink` as a sink of typed events passed through `wrap` (a guard around it), making
    the run's models stream as `sink` would."""
    streams = not isinstance(sink, Observer) or sink.streams
    return (Listener if streams else Observer)(wrap(typed_sink(sink)))


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
