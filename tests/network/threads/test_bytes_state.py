"""A typed `bytes` value on a thread, on every store (memory, SQLite, PostgreSQL): a run with
an event sink commits it, streamed too, and the next run (another store object: another
process, as far as it knows) reads the same bytes back from their JSON form (base64)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from network import ThreadRef
from network.threads import ThreadStore
from tests.network.state.test_bytes_values import RAW, TEXT, network

pytestmark = pytest.mark.anyio


async def test_bytes_are_committed_and_read_back_by_a_watched_run(
    open_store: Callable[[], ThreadStore],
) -> None:
    events: list[Any] = []
    first = await network().run(
        "go", thread=ThreadRef("t", store=open_store()), state={"blob": RAW}, sinks=[events.append]
    )
    assert first.output == "kept"
    assert next(e.snapshot for e in events if e.type == "STATE_SNAPSHOT")["blob"] == TEXT

    elsewhere = open_store()
    stored = await elsewhere.get_thread("t")
    assert stored is not None
    assert stored.state["blob"] == TEXT  # what the store keeps: the JSON form
    assert stored.state["blobs"] == [base64.urlsafe_b64encode(b"\xfe" + RAW).decode()]
    async with network().stream("again", thread=ThreadRef("t", store=elsewhere)) as stream:
        seen = [event async for event in stream]
    assert seen[-1].type == "RUN_FINISHED"
    assert next(e.snapshot for e in seen if e.type == "STATE_SNAPSHOT")["blob"] == TEXT
    again = await network().run("more", thread=ThreadRef("t", store=open_store()))
    assert again.state.kv.get("blob") == RAW
    assert again.state.kv.get("blobs") == [b"\xfe" + RAW] * 3
    assert again.state.kv.get("named") == {"k": RAW}
    assert again.results[-2].tool_calls[0].result == "blob has 4 bytes"
