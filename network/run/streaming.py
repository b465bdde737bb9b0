"""`EventStream`: a run's AG-UI events as an async iterator.

The run is the ordinary run loop, driven in a task of its own; the stream is one more sink on
its emitter, a memory channel the consumer reads. There is no second, "streaming" loop.

Contract:
- the events end with RUN_FINISHED, or with RUN_ERROR after which the run's exception is
  raised from the iterator (nothing is yielded after RUN_ERROR);
- a slow consumer slows the run down (the channel is bounded) instead of buffering forever;
- leaving early (`break`, an exception, cancellation) cancels the run. Use the stream as an
  async context manager (`async with network.stream(...) as events:`) or wrap it in
  `contextlib.aclosing` so that this happens at once and in the consumer's task; an abandoned
  iterator is otherwise only closed when it is garbage-collected.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any

import anyio

from network.run.emitter import EventSink

Starter = Callable[[EventSink], Awaitable[Any]]
"""`start(sink)` runs the network with `sink` among its sinks and returns its RunResult."""

BUFFER = 256  # events in flight between the run and a slow consumer


class EventStream(AsyncIterator[Any]):
    """The events of one run; iterate it, and close it (or use `async with`) when done.

    `result` holds the `RunResult` once the run finished (None when it failed or was cut).
    """

    def __init__(self, start: Starter, *, buffer: int = BUFFER) -> None:
        self._start = start
        self._buffer = buffer
        self.result: Any = None
        self._events = self._generate()

    async def _generate(self) -> AsyncGenerator[Any, None]:
        send, receive = anyio.create_memory_object_stream[Any](max_buffer_size=self._buffer)
        failure: list[BaseException] = []

        async def produce() -> None:
            async with send:
                try:
                    self.result = await self._start(send.send)
                except Exception as error:  # already reported as RUN_ERROR; raised below
                    failure.append(error)

        closed = False
        async with anyio.create_task_group() as group:
            group.start_soon(produce)
            try:
                async with receive:
                    async for event in receive:
                        try:
                            yield event
                        except GeneratorExit:  # closed by the consumer: leave the task group
                            closed = True  # normally, or it would wrap GeneratorExit
                            break
            finally:
                # The receiving end is closed by now, so the run's closing events fail fast
                # instead of waiting for a reader that is gone; then the run is cancelled.
                group.cancel_scope.cancel()
        if failure and not closed:
            raise failure[0]

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Any:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stop reading: cancels the run if it is still going."""
        await self._events.aclose()

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
