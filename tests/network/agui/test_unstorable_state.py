"""A tool writing a live object to state: over real HTTP the stream still ends properly, and
the thread keeps working (it used to die on serialization, breaking every later request)."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network
from network.agui import app
from network.errors import ToolStateWarning
from tests.network.agui.live import serve
from tests.network.agui.protocol import parse_sse

pytestmark = pytest.mark.usefixtures("quiet_logs")


@tool
def open_sandbox(ctx: ToolContext) -> str:
    """Open a sandbox and keep its client in state (the mistake under test)."""
    ctx.kv.set("sandbox", threading.Lock())
    return "opened"


@tool
def remember(ctx: ToolContext, text: str) -> str:
    """Remember a note."""
    ctx.kv.set("note", text)
    return "remembered"


def network() -> Network:
    def model(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "tool":
            return "tool said: " + str(last.content)[:200]
        if "sandbox" in str(last.content):
            return call("open_sandbox")
        return call("remember", text=str(last.content))

    agent = Agent("worker", tools=[open_sandbox, remember], model=ScriptedModel(model))
    return Network(
        "sandboxes", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None
    )


def body(run: str, text: str) -> dict[str, Any]:
    return {
        "threadId": "t-1",
        "runId": run,
        "messages": [{"id": f"{run}-u", "role": "user", "content": text}],
    }


def test_the_stream_ends_with_run_finished_and_the_thread_keeps_working() -> None:
    with serve(app(network())) as url, httpx.Client(base_url=url, timeout=30) as client:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = client.post("/", json=body("run-1", "open a sandbox"))
        assert first.status_code == 200
        events = parse_sse(first.text)
        types = [event["type"] for event in events]
        assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
        results = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
        assert "UnstorableValueError" in results[0]["content"]
        assert "'sandbox'" in results[0]["content"]
        assert any(issubclass(w.category, ToolStateWarning) for w in caught)

        second = client.post("/", json=body("run-2", "note this"))
        events = parse_sse(second.text)
        assert [e["type"] for e in events][-1] == "RUN_FINISHED"
        snapshots = [e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT"]
        assert snapshots == [{}]  # nothing of the refused write survived
        deltas = [op for e in events if e["type"] == "STATE_DELTA" for op in e["delta"]]
        assert deltas == [{"op": "add", "path": "/note", "value": "note this"}]


def test_client_state_that_is_not_json_is_refused_with_422() -> None:
    with serve(app(network())) as url, httpx.Client(base_url=url, timeout=30) as client:
        raw = b'{"threadId": "t-2", "runId": "r", "messages": [], "state": {"x": NaN}}'
        response = client.post("/", content=raw, headers={"content-type": "application/json"})
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["code"] == "invalid_state" and error["key"] == "x"
        assert "non-finite float" in error["message"]
