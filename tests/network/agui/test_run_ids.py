"""A bad run id from a client is a 422 `invalid_run_id` before anything runs, on every store.

The run id goes with every commit of the run; PostgreSQL refuses a NUL in text, so a run
taken with one would pay for its model calls and then fail every commit, losing the user's
message and the answer. The model here counts its requests: none may happen.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel
from network import Network
from network.agui import app
from network.threads import SQLStore
from network.threads.ids import MAX_ID_LENGTH
from tests.network.agui.protocol import parse_sse

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

BAD = {
    "NUL": "r\x00un",
    "empty": "",
    "blank": "   ",
    "too long": "r" * (MAX_ID_LENGTH + 1),
    "control character": "r\x1bun",
}


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    opened = SQLStore(url)
    await opened.setup()
    yield opened
    await opened.close()


async def test_a_bad_run_id_is_refused_before_the_model_is_called(store: Any) -> None:
    model = ScriptedModel(lambda request: "hello")
    asgi = app(Network("echo", agents=[Agent("echo", model=model)]), store=store)
    thread = f"t-{id(store)}"
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=asgi), base_url="http://t", timeout=30
    ) as client:
        for label, run_id in BAD.items():
            payload = {
                "threadId": thread,
                "runId": run_id,
                "messages": [{"id": "u1", "role": "user", "content": "hi"}],
            }
            response = await client.post(
                "/", content=json.dumps(payload), headers={"content-type": "application/json"}
            )
            assert response.status_code == 422, (label, response.text[:300])
            error = response.json()["error"]
            assert error["code"] == "invalid_run_id" and error["key"] == "runId", label
            assert "Error" not in error["message"]  # the rule, not an exception's text
        surrogate = json.dumps({"threadId": thread, "runId": "x", "messages": []})
        surrogate = surrogate.replace('"x"', '"a\\ud800b"')
        response = await client.post(
            "/", content=surrogate, headers={"content-type": "application/json"}
        )
        assert response.status_code == 422  # the documented code and key, not the parser's
        assert response.json()["error"]["code"] == "invalid_run_id"
        assert response.json()["error"]["key"] == "runId"
        assert not model.requests  # no model call was paid for
        assert await store.get_thread(thread) is None  # and nothing was stored
        good = await client.post(
            "/",
            json={
                "threadId": thread,
                "runId": "r-1",
                "messages": [{"id": "u1", "role": "user", "content": "hi"}],
            },
        )
    assert [e["type"] for e in parse_sse(good.text)][-1] == "RUN_FINISHED"
    assert len(model.requests) == 1
    kept = await store.get_thread(thread)
    assert [m.content for m in kept.messages] == ["hi", "hello"]
