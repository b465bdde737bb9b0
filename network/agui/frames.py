"""`FrameWriter`: a run's SSE frames, written to the socket in batches.

One `send` per event made every event its own socket write (and its own pass through the
ASGI server's flow control): a third of a served run's CPU went to the writes of its ~10 to
25 events. The run's sink here only encodes the event and appends the frame to a buffer; a
writer task sends everything buffered in one `http.response.body` message each time it gets
to run, which is when the run awaits something (its model, a tool, the next turn of the
event loop). So a run that streams tokens still reaches the client as it streams, and a run
that has a burst of events (the end of an agent call: TEXT_MESSAGE_END, STATE_DELTA,
STEP_FINISHED, ...) writes them at once. The bytes on the wire are the same frames in the
same order (`ag_ui.encoder.EventEncoder`'s `data: <json>\\n\\n`); only the HTTP chunks that
carry them are fewer.

An event whose text has no UTF-8 form (a lone surrogate a custom model or a tool handed the
run) is written with U+FFFD in its place (`network.utf8`), as the thread stores keep it: one bad
character is no reason to end the stream with an internal error. Only that event pays for it.

A slow client slows the run down instead of filling memory: past `limit` buffered bytes the
sink waits until the writer drained them. A client that went away (a write failed) makes the
next event fail, which ends the run.
"""

from __future__ import annotations

from typing import Any

import anyio
from ag_ui.encoder import EventEncoder
from pydantic_core import to_json
from starlette.types import Send

from network.utf8 import NO_UTF8_FORM, utf8_copy

DEFAULT_LIMIT = 256 * 1024  # bytes buffered before the run waits for the client


class ClientGone(Exception):
    """The client's connection failed while the run was writing to it."""


class FrameWriter:
    """The frames of one response (see the module docstring). Run `write` in a task beside
    the run, give the run `sink`, then `close` it to send the rest and end the body."""

    def __init__(self, send: Send, *, limit: int = DEFAULT_LIMIT) -> None:
        self._send = send
        self._encode = EventEncoder().encode
        self._limit = limit
        self._frames: list[bytes] = []
        self._size = 0
        self._wake = anyio.Event()
        self._room = anyio.Event()
        self._done = anyio.Event()
        self._closing = False
        self.gone = False

    async def sink(self, event: Any) -> None:
        """The run's sink: encode `event` and buffer its frame (waiting while too much is)."""
        if self.gone:
            raise ClientGone("the client went away")
        try:
            frame = self._encode(event).encode()
        except ValueError as exc:  # pydantic's serialization error, or the UTF-8 encode's own
            if NO_UTF8_FORM not in str(exc):
                raise
            frame = mended_frame(event)
        self._frames.append(frame)
        self._size += len(frame)
        self._wake.set()
        while self._size > self._limit and not self.gone:
            await self._room.wait()

    async def write(self) -> None:
        """The writer task: send what is buffered, in one message, whenever it can run."""
        try:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                body = b"".join(self._frames)
                self._frames.clear()
                self._size = 0
                self._room.set()
                self._room = anyio.Event()
                last = self._closing
                try:
                    message = {"type": "http.response.body", "body": body, "more_body": not last}
                    await self._send(message)
                except OSError:  # the client went away: the run hears of it at its next event
                    self.gone = True
                    self._room.set()
                    return
                if last:
                    return
        finally:
            self._done.set()

    async def close(self) -> None:
        """Send what is left and end the response body (once the run is over)."""
        self._closing = True
        self._wake.set()
        await self._done.wait()


def mended_frame(event: Any) -> bytes:
    """The SSE frame of `event` (an `ag_ui.core` model) with each lone surrogate as U+FFFD:
    the model's own dump (its aliases, its omitted Nones), mended, in `EventEncoder`'s form."""
    data = utf8_copy(event.model_dump(by_alias=True))
    return b"data: " + to_json(data) + b"\n\n"
