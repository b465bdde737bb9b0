"""A real uvicorn server on 127.0.0.1 (a free port) for the AG-UI tests that need real HTTP."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


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
