"""`FrameWriter`: a run's SSE frames, the same bytes in the same order, in fewer writes."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from ag_ui.encoder import EventEncoder

from network import events
from network.agui.frames import ClientGone, FrameWriter

pytestmark = pytest.mark.anyio

EVENTS = [
    events.run_started("t", "r"),
    events.step_started("a"),
    events.text_start("m1", "a"),
    events.text_content("m1", "hello"),
    events.text_end("m1"),
    events.step_finished("a"),
]


async def test_a_burst_of_events_is_one_write_of_the_same_bytes() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    frames = FrameWriter(send)
    async with anyio.create_task_group() as group:
        group.start_soon(frames.write)
        for event in EVENTS:  # no await of the run's own in between: one batch
            await frames.sink(event)
        await anyio.sleep(0.01)  # the run awaits something: the writer runs
        await frames.sink(events.run_finished("t", "r", result={"output": "hello"}))
        await frames.close()
    encoder = EventEncoder()
    expected = b"".join(encoder.encode(e).encode() for e in EVENTS)
    assert [m["body"] for m in sent] == [
        expected,
        encoder.encode(events.run_finished("t", "r", result={"output": "hello"})).encode(),
    ]
    assert [m["more_body"] for m in sent] == [True, False]


async def test_a_slow_client_holds_the_run_back_and_a_gone_one_stops_it() -> None:
    release = anyio.Event()
    sent: list[bytes] = []

    async def slow(message: dict[str, Any]) -> None:
        await release.wait()
        sent.append(message["body"])

    frames = FrameWriter(slow, limit=1)
    async with anyio.create_task_group() as group:
        group.start_soon(frames.write)
        await frames.sink(EVENTS[0])  # taken by the writer, which waits on the client
        await anyio.sleep(0.01)
        with anyio.move_on_after(0.2) as waited:
            await frames.sink(EVENTS[1])  # over the limit: the run waits
            await frames.sink(EVENTS[2])
        assert waited.cancelled_caught
        release.set()
        await frames.close()
    assert len(sent) >= 2

    async def gone(message: dict[str, Any]) -> None:
        raise OSError("connection reset")

    broken = FrameWriter(gone)
    async with anyio.create_task_group() as group:
        group.start_soon(broken.write)
        await broken.sink(EVENTS[0])
        await anyio.sleep(0.01)
        with pytest.raises(ClientGone):
            await broken.sink(EVENTS[1])
