"""A typed `bytes` key served over real HTTP (in memory, and on SQLite and PostgreSQL thread
stores): the client sees its JSON form (base64 text) in snapshots and deltas, can send it back
as state, and the run ends as it would unwatched (it used to fail at its first snapshot)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from network.agui import app
from tests.network.agui.live import serve
from tests.network.agui.protocol import parse_sse
from tests.network.state.test_bytes_values import TEXT, network

pytestmark = pytest.mark.usefixtures("quiet_logs")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        return str(tmp_path / "threads.db")
    if request.param == "postgres":
        return request.getfixturevalue("postgres_url")
    return None


def body(thread: str, run: str, text: str, state: dict[str, Any] | None = None) -> dict[str, Any]:
    sent: dict[str, Any] = {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": f"{run}-u", "role": "user", "content": text}],
    }
    if state is not None:
        sent["state"] = state
    return sent


def test_bytes_state_streams_as_base64_and_comes_back(store: Any) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    with serve(app(network(), store=store)) as url, httpx.Client(base_url=url, timeout=30) as c:
        first = c.post("/", json=body(thread, "run-1", "go", state={"blob": TEXT}))
        assert first.status_code == 200
        events = parse_sse(first.text)
        assert [e["type"] for e in events][-1] == "RUN_FINISHED"
        assert next(e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT") == {
            "blob": TEXT
        }
        results = [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
        assert results == ["blob has 4 bytes"]  # the tool read the bytes the client sent
        deltas = [op for e in events if e["type"] == "STATE_DELTA" for op in e["delta"]]
        assert {"op": "add", "path": "/named", "value": {"k": TEXT}} in deltas

        second = c.post("/", json=body(thread, "run-2", "again"))
        events = parse_sse(second.text)
        assert [e["type"] for e in events][-1] == "RUN_FINISHED"
        (snapshot, *_) = [e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT"]
        assert snapshot["blob"] == TEXT and snapshot["named"] == {"k": TEXT}
