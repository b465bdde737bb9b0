"""A server's own thread store (given no `store`) is bounded: many threads driven through a
real A2A server on 127.0.0.1 leave at most its `max_threads`, and a thread a run holds is
never forgotten. Each server's default store has the AG-UI registry's bounds."""

from __future__ import annotations

import time
from typing import Any

import anyio
import httpx
import pytest

from network.a2a import app
from network.cli.main import _parser
from network.cli.serve_app import serve_app
from network.mcp import mcp_server
from network.serving.default_store import default_memory_store
from network.serving.registry import DEFAULT_MAX_BYTES, DEFAULT_MAX_THREADS
from network.threads import MemoryStore
from tests.network.a2a.team import network
from tests.network.agui.live import serve
from tests.network.mcp.team import network as mcp_team

pytestmark = pytest.mark.usefixtures("quiet_logs")
HEADERS = {"a2a-version": "1.0"}


def send(http: httpx.Client, text: str, number: int, *, wait: bool = True) -> dict[str, Any]:
    message = {"messageId": f"m{number}", "role": "ROLE_USER", "parts": [{"text": text}]}
    params = {"message": message, "configuration": {"returnImmediately": not wait}}
    call = {"jsonrpc": "2.0", "id": number, "method": "SendMessage", "params": params}
    answer: dict[str, Any] = http.post("/", json=call, headers=HEADERS).json()
    return answer["result"]["task"]


def thread_ids(store: MemoryStore) -> set[str]:
    return {info.thread_id for info in anyio.run(store.list_threads)}


def test_many_threads_through_a2a_leave_at_most_max_threads_and_never_a_running_one() -> None:
    store = MemoryStore(max_threads=5)
    asgi = app(network, store=store)
    with serve(asgi, lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as http:
        running = send(http, "wait 60", 0, wait=False)["contextId"]
        deadline = time.monotonic() + 10
        while running not in thread_ids(store) and time.monotonic() < deadline:
            time.sleep(0.02)
        for number in range(1, 31):
            task = send(http, "hi", number)
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        kept = thread_ids(store)
        assert len(kept) == 5  # the running one and the four most recent
        assert running in kept
        assert store.bytes < 5 * 20_000


def test_the_bytes_of_a_servers_threads_are_bounded() -> None:
    store = MemoryStore(max_bytes=60_000)
    asgi = app(network, store=store)
    big = "x" * 3_000
    with serve(asgi, lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as http:
        for number in range(20):
            send(http, f"{big} {number}", number)
            assert store.bytes <= 60_000  # about 14 kB a thread
    assert 2 <= len(thread_ids(store)) < 20


def test_each_servers_default_store_has_the_registrys_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = default_memory_store()
    assert (store.max_threads, store.max_bytes) == (DEFAULT_MAX_THREADS, DEFAULT_MAX_BYTES)
    a2a_store = app(network).state.served.stored.store
    assert (a2a_store.max_threads, a2a_store.max_bytes) == (DEFAULT_MAX_THREADS, DEFAULT_MAX_BYTES)
    # the MCP server and `serve --a2a` (AG-UI and A2A on one store) make theirs the same way
    made: list[MemoryStore] = []

    def spy() -> MemoryStore:
        made.append(default_memory_store())
        return made[-1]

    monkeypatch.setattr("network.mcp.server.default_memory_store", spy)
    monkeypatch.setattr("network.cli.serve_app.default_memory_store", spy)
    mcp_server(mcp_team)
    args = _parser().parse_args(["serve", "tests/network/a2a/team.py", "--a2a"])
    asgi, _ = serve_app(args)
    while not hasattr(asgi, "a2a"):  # under the host and CORS middleware
        asgi = asgi.app
    assert len(made) == 2
    assert asgi.a2a.state.served.stored.store is made[1]
    assert asgi.agui.state.served.stored.store is made[1]
