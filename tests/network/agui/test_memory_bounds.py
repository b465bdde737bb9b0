"""Memory a client can pin on the server is bounded, and refused requests pin nothing.

Real HTTP: uvicorn on 127.0.0.1, httpx as the client.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel
from network import Network
from network.agui import ThreadRegistry, app
from tests.network.agui.live import serve

pytestmark = pytest.mark.usefixtures("quiet_logs")


def body(thread: str, run: str, **extra: Any) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": f"{run}-u", "role": "user", "content": "go"}],
        **extra,
    }


def typed_network(model: ScriptedModel) -> Network:
    return Network(
        "typed",
        agents=[Agent("a", model=model)],
        state_schema={"count": {"type": int}, "notes": {"type": str}},
    )


def test_refused_requests_on_new_threads_create_and_evict_nothing() -> None:
    model = ScriptedModel(lambda request: "ok")
    registry = ThreadRegistry(max_threads=30)
    asgi = app(typed_network(model), threads=registry)
    with serve(asgi) as base, httpx.Client(base_url=base, timeout=30) as http:
        victim = http.post("/", json=body("victim", "r0", state={"count": 1}))
        assert victim.status_code == 200
        for index in range(30):
            refused = http.post(
                "/", json=body(f"attacker-{index}", f"r{index}", state={"count": "x"})
            )
            assert refused.status_code == 422
    assert "victim" in registry and registry.peek("victim").state == {"count": 1}
    assert len(registry) == 1


def test_the_registry_is_bounded_by_bytes() -> None:
    model = ScriptedModel(lambda request: "ok")
    registry = ThreadRegistry(max_bytes=10_000, max_thread_bytes=4_000)
    asgi = app(typed_network(model), threads=registry)
    with serve(asgi) as base, httpx.Client(base_url=base, timeout=30) as http:
        for index in range(10):
            response = http.post("/", json=body(f"t{index}", "r", state={"notes": "x" * 3_000}))
            assert response.status_code == 200
            assert registry.bytes <= 10_000
    assert 2 <= len(registry) <= 3  # the least recently used threads were forgotten
    assert "t9" in registry and "t0" not in registry


def test_a_threads_state_is_bounded() -> None:
    model = ScriptedModel(lambda request: "ok")
    registry = ThreadRegistry(max_thread_bytes=2_000)
    asgi = app(typed_network(model), threads=registry)
    with serve(asgi) as base, httpx.Client(base_url=base, timeout=30) as http:
        assert http.post("/", json=body("t", "r1", state={"notes": "x" * 1_000})).status_code == 200
        response = http.post("/", json=body("t", "r2", state={"notes": "y" * 5_000}))
        assert response.status_code == 413
        error = response.json()["error"]
        assert error["code"] == "state_too_large" and "2000" in error["message"]
        fresh = http.post("/", json=body("new", "r3", state={"notes": "y" * 5_000}))
        assert fresh.status_code == 413
    assert registry.peek("t").state == {"notes": "x" * 1_000}  # as it was
    assert "new" not in registry
    assert len(model.requests) == 1


def test_a_state_that_outgrew_the_limit_in_a_run_refuses_the_next_request() -> None:
    model = ScriptedModel(lambda request: "z" * 3_000)
    network = Network(
        "grows",
        agents=[Agent("a", model=model, output_key="notes")],
        state_schema={"notes": {"type": str}},
    )
    registry = ThreadRegistry(max_thread_bytes=2_000)
    with (
        serve(app(network, threads=registry)) as base,
        httpx.Client(base_url=base, timeout=30) as http,
    ):
        assert http.post("/", json=body("t", "r1")).status_code == 200
        assert registry.peek("t").size > 3_000 and registry.bytes == registry.peek("t").size
        response = http.post("/", json=body("t", "r2"))
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "state_too_large"
    assert len(model.requests) == 1
