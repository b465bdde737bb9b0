"""A real uvicorn server on 127.0.0.1 (a free port) for the AG-UI tests that need real HTTP."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

CLIENT_DIR = Path(__file__).parent / "client"  # the npm AG-UI client's scripts


@contextmanager
def serve(asgi: Any, *, lifespan: str = "off") -> Iterator[str]:
    """Run `asgi` under uvicorn in a thread; yields its base URL, stops it on exit.

    `lifespan="on"` runs the app's startup and shutdown in the server's loop: an app that
    opens its store from a URL uses it in that loop only, and closes it there."""
    config = uvicorn.Config(asgi, host="127.0.0.1", port=0, lifespan=lifespan, log_level="warning")
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


@contextmanager
def server_errors() -> Iterator[list[logging.LogRecord]]:
    """The errors uvicorn logs while in the block: its `uvicorn.error` logger does not reach
    the root's, and its handlers are set when a server is configured, so this is entered
    once the server runs."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)


def leave_mid_body(port: int, path: str) -> None:
    """Announce a 1,000-byte JSON body, send one byte of it, and close the connection."""
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()
            + b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
        )


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


def drive(
    node: str, url: str, thread: str, params: dict[str, Any], on_event: Any = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run client/live.mjs (the official `@ag-ui/client`) with `node`: the events as the
    client handed them over, and its last report. `on_event(event)` is called for each event
    as the client reports it."""
    process = subprocess.Popen(
        [node, "live.mjs", url, thread, json.dumps(params)],
        cwd=CLIENT_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    events: list[dict[str, Any]] = []
    done: dict[str, Any] = {}
    try:
        assert process.stdout is not None
        for line in process.stdout:
            said = json.loads(line)
            if said.get("done"):
                done = said
                break
            events.append(said["event"])
            if on_event is not None:
                on_event(said["event"])
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
    assert done, (
        f"no report from the client script: {process.stderr.read() if process.stderr else ''}"
    )
    return events, done
