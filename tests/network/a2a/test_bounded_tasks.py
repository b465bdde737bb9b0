"""The A2A server's tasks in memory (on any store but SQL) are bounded: many tasks through a
real server on 127.0.0.1 leave at most `max_tasks`, the least recently saved forgotten first,
never one still working; and their bytes are bounded too."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import Task, TaskState, TaskStatus

from network.a2a import app
from network.a2a.bounded_tasks import BoundedTaskStore
from network.errors import ConfigurationError
from tests.network.a2a.team import network
from tests.network.agui.live import serve

pytestmark = pytest.mark.usefixtures("quiet_logs")
HEADERS = {"a2a-version": "1.0"}


def call(http: httpx.Client, method: str, params: dict[str, Any], number: int) -> Any:
    body = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
    return http.post("/", json=body, headers=HEADERS).json()


def send(http: httpx.Client, text: str, number: int, *, wait: bool = True) -> dict[str, Any]:
    message = {"messageId": f"m{number}", "role": "ROLE_USER", "parts": [{"text": text}]}
    params = {"message": message, "configuration": {"returnImmediately": not wait}}
    task: dict[str, Any] = call(http, "SendMessage", params, number)["result"]["task"]
    return task


def test_many_tasks_leave_at_most_max_tasks_and_never_a_working_one() -> None:
    asgi = app(network, max_tasks=5)
    tasks = asgi.state.handler.records.store
    with serve(asgi, lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as http:
        working = send(http, "wait 60", 0, wait=False)["id"]
        done = [send(http, "hi", number)["id"] for number in range(1, 31)]
        assert len(tasks) == 5
        records = asgi.state.handler.records  # the store itself, not the live task's copy
        assert anyio.run(records.get, working, None) is not None
        got = call(http, "GetTask", {"id": working}, 100)["result"]
        assert got["status"]["state"] == "TASK_STATE_WORKING"
        assert "result" in call(http, "GetTask", {"id": done[-1]}, 101)  # the latest kept
        gone = call(http, "GetTask", {"id": done[0]}, 102)  # the oldest forgotten
        assert gone["error"]["data"][0]["reason"] == "TASK_NOT_FOUND"
        call(http, "CancelTask", {"id": working}, 103)


def task(number: int, state: int, text: str = "") -> Task:
    return Task(
        id=f"t{number}",
        context_id=f"c{number}",
        status=TaskStatus(state=state),  # type: ignore[arg-type]
        metadata={"text": text} if text else None,
    )


def test_the_bytes_of_the_tasks_are_bounded_and_running_ones_kept() -> None:
    context = ServerCallContext(state={"owner": "alice"})
    store = BoundedTaskStore(
        InMemoryTaskStore(owner_resolver=lambda c: c.state["owner"]),
        owner_of=lambda c: c.state["owner"],
        max_tasks=100,
        max_bytes=10_000,
    )

    async def scenario() -> None:
        await store.save(task(0, TaskState.TASK_STATE_SUBMITTED, "x" * 3_000), context)
        for number in range(1, 20):
            await store.save(task(number, TaskState.TASK_STATE_COMPLETED, "x" * 2_000), context)
            assert store.bytes <= 10_000
        assert await store.get("t0", context) is not None  # running: kept
        assert await store.get("t19", context) is not None
        assert await store.get("t1", context) is None
        assert len(store) < 5

    anyio.run(scenario)


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ConfigurationError, match="max_tasks"):
        app(network, max_tasks=0)
