"""The A2A server's runs in flight are bounded (`max_runs`, the serving layer's `RunSlots`):
a message over the limit is refused at once, 503 `server_busy` with `Retry-After` (or, past
that check, by the admission as a JSON-RPC error naming it), and a cancelled task gives its
slot back. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from a2a.types import InternalError

from network.a2a import app
from network.a2a.handler import to_a2a_error
from network.serving import RunSlots
from network.serving.errors import thread_busy
from tests.network.a2a.team import network
from tests.network.agui.live import serve

pytestmark = pytest.mark.usefixtures("quiet_logs")
HEADERS = {"a2a-version": "1.0"}


def post(http: httpx.Client, text: str, number: int) -> httpx.Response:
    message = {"messageId": f"m{number}", "role": "ROLE_USER", "parts": [{"text": text}]}
    params = {"message": message, "configuration": {"returnImmediately": True}}
    call = {"jsonrpc": "2.0", "id": number, "method": "SendMessage", "params": params}
    return http.post("/", json=call, headers=HEADERS)


def send(http: httpx.Client, text: str, number: int) -> dict[str, Any]:
    answer: dict[str, Any] = post(http, text, number).json()
    return answer


def test_a_message_over_max_runs_is_refused_and_a_cancelled_task_frees_its_slot() -> None:
    asgi = app(network, max_runs=2)
    slots = asgi.state.served.slots
    with serve(asgi, lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as http:
        tasks = [send(http, "wait 60", number)["result"]["task"]["id"] for number in (1, 2)]
        for number in (3, 4):  # refused before the SDK reads it, as the other limits are
            refused = post(http, "hi", number)
            assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
            error = refused.json()["error"]
            assert error["code"] == "server_busy" and "limit of 2 runs" in error["message"]
        rest = {"message": {"messageId": "m5", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
        assert http.post("/v1/message:send", json=rest, headers=HEADERS).status_code == 503
        # what does not start a task is answered as ever
        get = {"jsonrpc": "2.0", "id": 6, "method": "GetTask", "params": {"id": tasks[1]}}
        assert http.post("/", json=get, headers=HEADERS).json()["result"]["id"] == tasks[1]
        assert slots.running == 2
        cancel = {"jsonrpc": "2.0", "id": 9, "method": "CancelTask", "params": {"id": tasks[0]}}
        cancelled = http.post("/", json=cancel, headers=HEADERS).json()["result"]
        assert cancelled["status"]["state"] == "TASK_STATE_CANCELED"
        deadline = time.monotonic() + 10
        while slots.running > 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert slots.running == 1
        assert "result" in send(http, "hi", 7)  # admitted again


def test_a_refusal_of_the_admission_itself_names_server_busy_in_json_rpc() -> None:
    # a message that passed the HTTP check as another took the last slot: the handler's
    # admission refuses it, in JSON-RPC's terms (A2A 1.0 puts `data` in an ErrorInfo)
    error = to_a2a_error(RunSlots(2, retry_after=4).busy())
    assert isinstance(error, InternalError)
    assert error.data == {"code": "server_busy", "status": 503, "retryAfter": 4}
    assert "limit of 2 runs" in error.message


def test_a_busy_thread_tells_when_to_try_again_in_json_rpc() -> None:
    # docs/serving.md: 409 `thread_busy` carries a Retry-After (1 s); it carried none
    error = to_a2a_error(thread_busy("t"))
    assert error.data == {"code": "thread_busy", "status": 409, "retryAfter": 1}
    assert thread_busy("t").headers() == {"retry-after": "1"}


def test_a_message_to_an_app_whose_lifespan_never_ran_holds_no_slot() -> None:
    # it was admitted (its slot and its thread's lease taken), then refused to launch, and
    # neither was given back
    asgi = app(network, max_runs=1)
    with serve(asgi, lifespan="off") as url, httpx.Client(base_url=url, timeout=30) as http:
        for number in (1, 2):
            error = send(http, "hi", number)["error"]
            assert error["code"] == -32603 and "internal error (reference" in error["message"]
        assert asgi.state.served.slots.running == 0
