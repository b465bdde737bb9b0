"""A real uvicorn server on 127.0.0.1 (a free port) for the AG-UI tests that need real HTTP."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn


@contextmanager
def serve(asgi: Any) -> Iterator[str]:
    """Run `asgi` under uvicorn in a thread; yields its base URL, stops it on exit."""
    config = uvicorn.Config(asgi, host="127.0.0.1", port=0, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def run_body(thread: str, run: str, text: str, **extra: Any) -> dict[str, Any]:
    """A RunAgentInput body with one user message."""
    message = {"id": f"{run}-user", "role": "user", "content": text}
    return {"threadId": thread, "runId": run, "messages": [message], **extra}


def leave_while_running(url: str, asgi: Any, body: dict[str, Any], started: Any) -> bool:
    """Start a run, close the connection once `started` is set (a threading.Event the run's
    tool or model sets), and wait up to 30 s for the server to free the thread. Returns
    whether the thread is free."""
    with (
        httpx.Client(base_url=url, timeout=30) as client,
        client.stream("POST", "/", json=body) as response,
    ):
        assert response.status_code == 200
        assert started.wait(30)
    record = asgi.state.threads.peek(body["threadId"])
    deadline = time.monotonic() + 30
    while record.run_id is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    return record.run_id is None
