"""A durable run whose model answers with a lone surrogate ends as a plain run does, on a
thread: DBOS records its steps and events with pickle (which keeps the character), and the
thread's commit stores U+FFFD in its place (`network.utf8`), as a plain run's does."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents import Agent, ScriptedModel
from network import Network, ThreadRef, durable
from network.threads import SQLStore

LONE = Network(
    "lone",
    agents=[Agent("talker", model=ScriptedModel(["bad \ud800 text"], repeat_last=True))],
)


@pytest.fixture
def launched(durable_db: str) -> Iterator[str]:
    durable.launch([LONE], db=durable_db)
    try:
        yield durable_db
    finally:
        durable.shutdown()


@pytest.mark.anyio
async def test_a_durable_run_on_a_thread_keeps_an_answer_with_a_lone_surrogate(
    launched: str, tmp_path: Path
) -> None:
    path = str(tmp_path / "threads.db")
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    result = await LONE.run("go", durable=True, run_id=run_id, thread=ThreadRef("t", store=path))
    assert result.output == "bad \ud800 text" and result.stop_reason == "router_finished"
    client = durable.DurableClient(launched)
    try:
        texts = [e["delta"] for e in client.events(run_id) if e["type"] == "TEXT_MESSAGE_CONTENT"]
        assert "".join(texts) == "bad \ud800 text"  # the run's own events, as it ran
    finally:
        client.close()
    store = SQLStore(f"sqlite+aiosqlite:///{path}")
    try:
        thread = await store.get_thread("t")
        assert thread is not None
        assert [m.content for m in thread.messages] == ["go", "bad \ufffd text"]
    finally:
        await store.close()
