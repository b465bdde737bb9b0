"""What a plain HTTP client of `agent-network serve --a2a` meets when it does what the
official test kit (a2aproject/a2a-tck) does: against a real server process, anonymous.

- a 1.0 call (`SendMessage`, `GetTask`, `ListTasks`) sent without an `A2A-Version` header is
  answered as 1.0, where the SDK read it as 0.3 and refused it; a header the client sends
  is kept (`0.3` on a 1.0 method is still refused);
- the agent card is also beside the endpoint (`/a2a/.well-known/agent-card.json`), so a
  client given the endpoint's URL finds it: the official client's `create_client` too;
- `ListTasks` with a `status` that is no task state is invalid params (JSON-RPC -32602,
  REST 400), where the SDK read it as no filter and listed every task.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a.types import TaskState

from tests.network.a2a.servers import client_for, collect, output_text, said, serve

pytestmark = pytest.mark.anyio
TARGET = "examples/a2a_test_agent.py:network"
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("a2a-plain") / "threads.db"
    with serve(str(store), None, target=TARGET) as url:
        yield url


async def rpc(base: str, method: str, params: dict[str, Any], **headers: str) -> Any:
    call = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.post(f"{base}/a2a", json=call, headers={**JSON, **headers})
    return answer.json()


def message(text: str) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}


async def test_a_1_0_call_without_a_version_header_is_answered_as_1_0(base: str) -> None:
    sent = await rpc(base, "SendMessage", {"message": message("hello")})
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", sent
    got = await rpc(base, "GetTask", {"id": task["id"]})
    assert got["result"]["id"] == task["id"], got
    listed = await rpc(base, "ListTasks", {"contextId": task["contextId"]})
    assert [t["id"] for t in listed["result"]["tasks"]] == [task["id"]], listed
    # a version the client names is the one it gets
    refused = await rpc(base, "SendMessage", {"message": message("hi")}, **{"A2A-Version": "0.3"})
    assert refused["error"]["code"] == -32009, refused  # VersionNotSupportedError


async def test_the_card_is_also_beside_the_endpoint(base: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        root = (await http.get(f"{base}/.well-known/agent-card.json")).json()
        beside = await http.get(f"{base}/a2a/.well-known/agent-card.json")
    assert beside.status_code == 200 and beside.json() == root
    client = await client_for(f"{base}/a2a", None, streaming=False)  # the endpoint's URL
    (answer,) = await collect(client, said("found"))
    assert output_text(answer.task) == "echo: found"


async def test_a_status_filter_naming_no_state_is_invalid_params(base: str) -> None:
    one = {"a2a-version": "1.0"}  # the header named: this is about the filter alone
    done = await rpc(base, "SendMessage", {"message": message("listed")}, **one)
    context = done["result"]["task"]["contextId"]
    for status in ("INVALID_STATUS", "running", 99, True):
        refused = await rpc(base, "ListTasks", {"status": status}, **one)
        error = refused["error"]
        assert error["code"] == -32602 and "is not a task state" in error["message"], refused
    for status, count in (("TASK_STATE_COMPLETED", 1), ("TASK_STATE_WORKING", 0)):
        listed = await rpc(base, "ListTasks", {"contextId": context, "status": status}, **one)
        assert len(listed["result"]["tasks"]) == count, listed
    async with httpx.AsyncClient(timeout=30) as http:
        rest = await http.get(f"{base}/a2a/v1/tasks", params={"status": "BOGUS"}, headers=one)
        assert rest.status_code == 400 and "'BOGUS' is not a task state" in rest.text
        by_number = await http.get(
            f"{base}/a2a/v1/tasks",
            params={"status": str(TaskState.TASK_STATE_COMPLETED), "contextId": context},
            headers=one,
        )
        assert by_number.status_code == 200 and len(by_number.json()["tasks"]) == 1
