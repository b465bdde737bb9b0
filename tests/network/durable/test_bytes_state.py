"""A durable run (whose event log is a sink) with a typed `bytes` key ends as a plain run does,
on a DBOS system database in SQLite and in PostgreSQL, with and without a thread: its recorded
events and its status carry the bytes' JSON form (base64 text)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from network import ThreadRef, durable
from tests.network.state.test_bytes_values import RAW, TEXT, network

BLOBS = network()


@pytest.fixture
def launched(durable_db: str) -> Iterator[str]:
    durable.launch([BLOBS], db=durable_db)
    try:
        yield durable_db
    finally:
        durable.shutdown()


@pytest.mark.anyio
@pytest.mark.parametrize("on_thread", [False, True])
async def test_a_durable_run_with_bytes_ends_as_a_plain_run(
    launched: str, tmp_path: Path, on_thread: bool
) -> None:
    plain = await BLOBS.run("go", state={"blob": RAW})
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    thread = ThreadRef("t", store=str(tmp_path / "threads.db")) if on_thread else None
    result = await BLOBS.run("go", durable=True, run_id=run_id, state={"blob": RAW}, thread=thread)
    assert result.output == plain.output == "kept"
    assert result.state.kv.data == plain.state.kv.data
    client = durable.DurableClient(launched)
    try:
        assert client.status(run_id).state["blob"] == TEXT
        snapshots = [e["snapshot"] for e in client.events(run_id) if e["type"] == "STATE_SNAPSHOT"]
        assert snapshots[0]["blob"] == TEXT
    finally:
        client.close()
