"""A client that leaves while a blocking tool hangs frees its thread at once over real HTTP:
the hung thread is abandoned, not awaited, so the next request on the thread is served."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel, call, tool
from network import Network
from network.agui import app
from tests.network.agui.live import leave_while_running, run_body, serve
from tests.network.agui.protocol import parse_sse

pytestmark = pytest.mark.usefixtures("quiet_logs")


def test_a_disconnect_frees_the_thread_while_a_blocking_tool_still_hangs() -> None:
    started = threading.Event()
    release = threading.Event()
    watchdog = threading.Timer(60, release.set)  # frees the worker thread even if the test fails
    watchdog.start()

    @tool(blocking=True)
    def stuck() -> str:
        """Hang until released."""
        started.set()
        release.wait()
        return "done"

    def model(request: Any) -> Any:
        if request.history[-1].role == "user" and "hang" in str(request.history[-1].content):
            return call("stuck")
        return "hello"

    agent = Agent("a", tools=[stuck], model=ScriptedModel(model))
    asgi = app(
        Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None)
    )
    try:
        with serve(asgi) as url:
            freed = leave_while_running(url, asgi, run_body("t", "r1", "hang"), started)
            assert not release.is_set()  # still hanging, yet the thread is free
            assert freed
            with httpx.Client(base_url=url, timeout=30) as client:
                response = client.post("/", json=run_body("t", "r2", "hi"))
            assert response.status_code == 200
            assert [e["type"] for e in parse_sse(response.text)][-1] == "RUN_FINISHED"
    finally:
        release.set()
        watchdog.cancel()
