"""A bad thread id from a client is a clear 422 over real HTTP, naming the field, never a
driver's text; the server keeps serving good ones."""

from __future__ import annotations

import json

import httpx
import pytest

from agents import Agent, ScriptedModel
from network import Network
from network.agui import app
from network.threads.ids import MAX_ID_LENGTH
from tests.network.agui.live import serve
from tests.network.agui.protocol import parse_sse

pytestmark = pytest.mark.usefixtures("quiet_logs")

BAD = {
    "empty": "",
    "too long": "t" * (MAX_ID_LENGTH + 1),
    "NUL": "a\x00b",
    "control character": "a\x1bb",
}


def test_bad_thread_ids_get_a_422_and_run_nothing() -> None:
    model = ScriptedModel(lambda request: "hello")
    asgi = app(Network("echo", agents=[Agent("echo", model=model)]))
    with serve(asgi) as url, httpx.Client(base_url=url, timeout=30) as client:
        for label, thread_id in BAD.items():
            payload = {"threadId": thread_id, "runId": "r", "messages": []}
            response = client.post(
                "/", content=json.dumps(payload), headers={"content-type": "application/json"}
            )
            assert response.status_code == 422, label
            error = response.json()["error"]
            assert error["code"] == "invalid_thread_id" and error["key"] == "threadId"
            assert "threadId" in error["message"]
            assert "Error" not in error["message"]  # no exception or driver text
        surrogate = b'{"threadId": "a\\ud800b", "runId": "r", "messages": []}'
        response = client.post("/", content=surrogate, headers={"content-type": "application/json"})
        assert response.status_code == 422  # as docs/agui.md says: the id's own code and key
        assert response.json()["error"]["code"] == "invalid_thread_id"
        assert response.json()["error"]["key"] == "threadId"
        assert not model.requests and asgi.state.threads.peek("") is None
        good = client.post(
            "/",
            json={
                "threadId": "t-1",
                "runId": "r",
                "messages": [{"id": "u", "role": "user", "content": "hi"}],
            },
        )
        assert [e["type"] for e in parse_sse(good.text)][-1] == "RUN_FINISHED"
