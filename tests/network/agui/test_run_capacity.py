"""At most `max_runs` runs at once on a server, whatever their threads; a run over the limit
is refused at once (503 `server_busy`, `Retry-After`), and every way a run ends gives its
slot back: finished, failed, refused after admission, its client gone.

Real HTTP: uvicorn on 127.0.0.1, httpx as the client, many requests at once.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from agents import Agent, ScriptedModel, call, tool
from network import Network
from network.agui import app
from network.serving import RunSlots
from network.serving.capacity import MAX_DEFAULT_RUNS, default_max_runs
from network.threads import MemoryStore
from tests.network.agui.live import run_body, serve
from tests.network.agui.protocol import parse_sse

pytestmark = pytest.mark.usefixtures("quiet_logs")


class Gate:
    """A blocking tool's gate: counts the runs inside it, holds them until opened."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.opened = threading.Event()
        self.entered = threading.Condition(self.lock)

    def enter(self) -> None:
        with self.lock:
            self.inside += 1
            self.entered.notify_all()
        self.opened.wait(60)  # never forever, even when the test fails

    def wait_for(self, count: int) -> bool:
        with self.lock:
            return self.entered.wait_for(lambda: self.inside >= count, timeout=30)


def gated_network(gate: Gate) -> Network:
    @tool(blocking=True)
    def hold() -> str:
        """Wait at the gate."""
        gate.enter()
        return "held"

    def model(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "user" and "hold" in str(last.content):
            return call("hold")
        if last.role == "user" and "fail" in str(last.content):
            raise RuntimeError("the model broke")
        return "done"

    agent = Agent("a", tools=[hold], model=ScriptedModel(model))
    return Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None)


@pytest.fixture
def gate() -> Iterator[Gate]:
    gate = Gate()
    yield gate
    gate.opened.set()  # no worker thread outlives the test


def wait_until(check: Any, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


async def burst(url: str, count: int, gate: Gate, tag: str) -> list[tuple[int, Any, str]]:
    """`count` runs on as many threads at once; each answer's status, headers and body,
    the admitted ones read to their end once all have answered and the gate is opened."""
    answers: list[tuple[int, Any, str]] = []
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        responses: list[httpx.Response] = []

        async def one(index: int) -> None:
            request = http.build_request(
                "POST", "/", json=run_body(f"{tag}-{index}", f"{tag}-r{index}", "hold")
            )
            responses.append(await http.send(request, stream=True))

        async with anyio.create_task_group() as group:
            for index in range(count):
                group.start_soon(one, index)
        await anyio.to_thread.run_sync(gate.wait_for, sum(r.status_code == 200 for r in responses))
        gate.opened.set()
        for response in responses:
            body = (await response.aread()).decode()
            answers.append((response.status_code, response.headers, body))
            await response.aclose()
    return answers


@pytest.mark.parametrize("on_store", [False, True], ids=["memory", "store"])
def test_exactly_max_runs_run_at_once_and_the_rest_are_refused(gate: Gate, on_store: bool) -> None:
    store = {"store": MemoryStore()} if on_store else {}
    asgi = app(gated_network(gate), max_runs=3, **store)
    slots = asgi.state.served.slots
    with serve(asgi) as url:
        answers = anyio.run(burst, url, 12, gate, "a")
        ran = [body for status, _, body in answers if status == 200]
        refused = [(headers, body) for status, headers, body in answers if status != 200]
        assert len(ran) == 3 and gate.inside == 3
        assert all(parse_sse(body)[-1]["type"] == "RUN_FINISHED" for body in ran)
        assert len(refused) == 9
        for headers, body in refused:
            assert headers["retry-after"] == "1"
            assert headers["content-type"] == "application/json"
            assert '"code":"server_busy"' in body and "limit of 3 runs" in body
        assert wait_until(lambda: slots.running == 0)
        # the slots came back: the next burst gets as many
        gate.opened.clear()
        again = anyio.run(burst, url, 5, gate, "b")
        assert sorted(status for status, _, _ in again) == [200] * 3 + [503] * 2
    assert wait_until(lambda: slots.running == 0)
    if not on_store:  # a refused request kept nothing: only the threads that ran are known
        ran_on = {
            parse_sse(body)[0]["threadId"]
            for status, _, body in [*answers, *again]
            if status == 200
        }
        assert len(ran_on) == 6
        assert set(asgi.state.threads.owned_by(None)) == ran_on


@pytest.mark.parametrize("on_store", [False, True], ids=["memory", "store"])
def test_a_client_that_leaves_mid_stream_frees_its_slot(gate: Gate, on_store: bool) -> None:
    store = {"store": MemoryStore()} if on_store else {}
    asgi = app(gated_network(gate), max_runs=1, **store)
    slots = asgi.state.served.slots
    with serve(asgi) as url:
        with (
            httpx.Client(base_url=url, timeout=30) as http,
            http.stream("POST", "/", json=run_body("t1", "r1", "hold")) as response,
        ):
            assert response.status_code == 200
            assert gate.wait_for(1)  # the run holds the slot, inside its tool
            assert slots.running == 1
        # the connection is closed: the run is cancelled, its slot given back
        assert wait_until(lambda: slots.running == 0)  # while its tool still hangs
        assert not gate.opened.is_set()
        with httpx.Client(base_url=url, timeout=30) as http:
            response = http.post("/", json=run_body("t2", "r2", "hi"))
        assert response.status_code == 200
        assert parse_sse(response.text)[-1]["type"] == "RUN_FINISHED"


def test_failed_and_refused_runs_give_their_slot_back(gate: Gate) -> None:
    asgi = app(gated_network(gate), max_runs=1)
    slots = asgi.state.served.slots
    with serve(asgi) as url, httpx.Client(base_url=url, timeout=30) as http:
        for index in range(3):  # the run fails: RUN_ERROR, the slot back
            failed = http.post("/", json=run_body(f"f{index}", f"rf{index}", "fail"))
            assert parse_sse(failed.text)[-1]["type"] == "RUN_ERROR"
            assert wait_until(lambda: slots.running == 0)
        for index in range(3):  # refused after admission (a system message): 422
            asked = run_body(f"s{index}", f"rs{index}", "hi")
            asked["messages"].insert(0, {"id": f"sys{index}", "role": "system", "content": "x"})
            refused = http.post("/", json=asked)
            assert refused.status_code == 422 and slots.running == 0
        fine = http.post("/", json=run_body("ok", "rok", "hi"))
        assert parse_sse(fine.text)[-1]["type"] == "RUN_FINISHED"


def test_a_full_server_refuses_before_it_reads_the_body(gate: Gate) -> None:
    slots = RunSlots(1, retry_after=7)
    asgi = app(gated_network(gate), max_runs=slots, max_body_bytes=1000)
    with serve(asgi) as url, httpx.Client(base_url=url, timeout=30) as http:
        taken = slots.take()  # the server is full
        try:
            big = http.post("/", json=run_body("t", "r", "x" * 5000))
        finally:
            taken.release()
        assert big.status_code == 503  # not 413: the body was never read
        assert big.headers["retry-after"] == "7"
        assert big.json()["error"]["code"] == "server_busy"
        assert http.post("/", json=run_body("t", "r", "hi")).status_code == 200


def test_bodies_being_read_count_against_max_runs(gate: Gate) -> None:
    # Bodies announced and not yet sent whole were read outside the bound: a client opening
    # many connections made the server hold up to 1 MiB each, however many, at max_runs=2.
    # A body being read holds a run's slot; its connection gone, the slot is back.
    asgi = app(gated_network(gate), max_runs=2)
    slots = asgi.state.served.slots
    with serve(asgi) as url, httpx.Client(base_url=url, timeout=30) as http:
        port = int(httpx.URL(url).port or 80)
        held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
        try:
            for raw in held:
                raw.sendall(
                    b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
                )
            assert wait_until(lambda: slots.running == 2)
            refused = http.post("/", json=run_body("t", "r", "hi"))
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["code"] == "server_busy"
        finally:
            for raw in held:
                raw.close()
        assert wait_until(lambda: slots.running == 0)
        answered = http.post("/", json=run_body("t", "r", "hi"))
        assert parse_sse(answered.text)[-1]["type"] == "RUN_FINISHED"


def test_the_default_limit_follows_the_open_file_limit() -> None:
    resource = pytest.importorskip("resource")
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    expected = (
        MAX_DEFAULT_RUNS
        if soft == resource.RLIM_INFINITY
        else max(1, min(MAX_DEFAULT_RUNS, soft // 8))
    )
    assert default_max_runs() == expected
    assert 1 <= app(gated_network(Gate())).state.served.slots.limit <= MAX_DEFAULT_RUNS
