"""The network served over A2A, driven by the official `a2a-sdk` client against real
`agent-network serve --a2a` processes, two per store (SQLite, PostgreSQL).

- the agent card is the network's: its agents' and tools' skills, streaming, bearer auth;
- a message is a task on its context's thread: sent, streamed, read back with tasks/get,
  continued in the same context (from another process too); tasks on several contexts
  run at once, from both processes, on the one store;
- an approval is `input-required`, answered once: the answer from either process runs the
  tool exactly once (counted in a file), a second answer runs nothing, and another
  principal can neither read nor answer the task;
- tasks/cancel stops a running task; a failure is screened (no secret reaches the client),
  a raised exception fails the task at once, and the server logs no frame's locals;
- a conversation started over AG-UI goes on over A2A, on the same thread;
- a 0.3 client (no A2A-Version header, `message/send`) is answered in 0.3's shapes.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from a2a.client.errors import A2AClientError
from a2a.types import GetTaskRequest, TaskState
from a2a.utils.errors import A2AError

from tests.network.a2a.servers import (
    TOKENS,
    Pair,
    answering,
    cancelled_while_running,
    client_for,
    collect,
    final_task,
    output_text,
    said,
    served_pair,
    waiting_on,
)
from tests.network.a2a.team import IN_FRAME, SECRET

pytestmark = pytest.mark.anyio
REFUSED = (A2AError, A2AClientError)  # the client raises the server's error, or its own


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pair]:
    with served_pair(request, tmp_path_factory.mktemp("a2a"), request.param) as pair:
        yield pair


def context() -> str:
    return f"ctx-{uuid.uuid4().hex[:12]}"


async def test_the_agent_card_is_built_from_the_network(servers: Pair) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        card = (await http.get(f"{servers.one}/.well-known/agent-card.json")).json()
    assert card["name"] == "till" and card["capabilities"]["streaming"] is True
    skills = {skill["id"]: skill for skill in card["skills"]}
    assert skills["cashier"]["tags"] == ["agent"]
    assert "needs-approval" in skills["cashier.pay"]["tags"]
    assert card["supportedInterfaces"][0] == {
        "url": f"{servers.one}/a2a",
        "protocolBinding": "JSONRPC",
        "protocolVersion": "1.0",
    }
    assert "bearer" in card["securitySchemes"]
    assert card["url"] == f"{servers.one}/a2a"  # 0.3 clients read this


async def test_a_message_is_a_task_on_its_contexts_thread(servers: Pair) -> None:
    client = await client_for(servers.one, "alice", streaming=False)
    here = context()
    (first,) = await collect(client, said("hello", here))
    assert first.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert output_text(first.task) == "echo: hello" and first.task.context_id == here
    # the same context, from the other process: the thread remembers
    other = await client_for(servers.two, "alice")
    task = final_task(await collect(other, said("recall", here)))
    assert output_text(task) == "recall: hello | recall"
    assert task.id != first.task.id
    got = await other.get_task(GetTaskRequest(id=first.task.id))
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    assert [m.role for m in got.history][:1] == [1]  # the user's message first
    # another principal: neither the task nor the context is theirs
    bob = await client_for(servers.one, "bob")
    with pytest.raises(REFUSED, match="no task"):
        await bob.get_task(GetTaskRequest(id=first.task.id))
    with pytest.raises(REFUSED, match="no thread"):
        await collect(bob, said("mine now", here))


async def test_concurrent_tasks_on_one_store_all_complete(servers: Pair) -> None:
    """Six messages at once, on six contexts, three to each process on the one store: the
    task records' writes wait for each other's (no "database is locked" on SQLite)."""
    answered: dict[int, Any] = {}

    async def send(number: int) -> None:
        url = servers.one if number % 2 else servers.two
        client = await client_for(url, "alice", streaming=False)
        (event,) = await collect(client, said(f"hello {number}", context()))
        answered[number] = event.task

    # Each process's thread store creates its tables on first use: once each first (two
    # processes creating them at once on a fresh PostgreSQL database is another matter).
    await send(0)
    await send(1)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for number in range(6):
                group.start_soon(send, number)
    assert {n: t.status.state for n, t in answered.items()} == {
        n: TaskState.TASK_STATE_COMPLETED for n in range(6)
    }
    assert all(output_text(t) == f"echo: hello {n}" for n, t in answered.items())
    reader = await client_for(servers.two, "alice")
    for task in answered.values():  # each record kept, as it ended
        got = await reader.get_task(GetTaskRequest(id=task.id))
        assert got.status.state == TaskState.TASK_STATE_COMPLETED


async def test_an_approval_is_input_required_and_answered_exactly_once(servers: Pair) -> None:
    alice = await client_for(servers.one, "alice")
    before = servers.payments()
    events = await collect(alice, said("pay 101", context()))
    waiting = final_task(events)
    assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    (asked,) = waiting_on(waiting)
    assert asked["tool"] == "pay" and asked["arguments"] == {"amount": 101}
    assert servers.payments() == before
    # bob cannot answer it
    bob = await client_for(servers.two, "bob")
    with pytest.raises(REFUSED, match="no task"):
        await collect(bob, answering(waiting))
    # two answers at once, one per process: one runs the tool, the other nothing
    other = await client_for(servers.two, "alice")
    outcomes: list[Any] = []

    async def answer(client: Any) -> None:
        try:
            outcomes.append(final_task(await collect(client, answering(waiting))))
        except REFUSED as refused:
            outcomes.append(refused)

    async with anyio.create_task_group() as group:
        group.start_soon(answer, alice)
        group.start_soon(answer, other)
    done = [o for o in outcomes if not isinstance(o, Exception)]
    assert len(done) == 1, outcomes
    assert output_text(done[0]) == "done: paid 101"
    assert servers.payments() == [*before, "101"]
    # a third answer, later: the task has ended
    with pytest.raises(REFUSED, match="TASK_STATE_COMPLETED"):
        await collect(alice, answering(waiting))
    assert servers.payments() == [*before, "101"]


async def test_a_rejected_approval_runs_nothing(servers: Pair) -> None:
    alice = await client_for(servers.one, "alice", streaming=False)
    before = servers.payments()
    (asked,) = await collect(alice, said("pay 7", context()))
    (done,) = await collect(alice, answering(asked.task, approved=False))
    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert "rejected" in output_text(done.task) and servers.payments() == before


async def test_a_running_task_is_cancelled(servers: Pair) -> None:
    alice = await client_for(servers.one, "alice")
    task = await cancelled_while_running(alice, said("wait 30", context()))
    assert task.status.state == TaskState.TASK_STATE_CANCELED
    got = await (await client_for(servers.two, "alice")).get_task(GetTaskRequest(id=task.id))
    assert got.status.state == TaskState.TASK_STATE_CANCELED


async def test_a_failure_is_screened(servers: Pair) -> None:
    alice = await client_for(servers.one, "alice", streaming=False)
    (failed,) = await collect(alice, said("leak", context()))
    assert failed.task.status.state == TaskState.TASK_STATE_FAILED
    told = failed.task.status.message.parts[0].text
    assert told.startswith("internal error (reference err_") and SECRET not in str(failed)
    (model,) = await collect(alice, said("explode", context()))
    assert "ModelError: the provider is down" in model.task.status.message.parts[0].text


async def test_a_raised_exception_fails_the_task_promptly_and_screened(servers: Pair) -> None:
    for streaming in (False, True):
        alice = await client_for(servers.one, "alice", streaming=streaming)
        with anyio.fail_after(30):
            failed = final_task(await collect(alice, said("crash", context())))
        assert failed.status.state == TaskState.TASK_STATE_FAILED
        told = failed.status.message.parts[0].text
        assert told.startswith("internal error (reference err_"), told
        assert "broke" not in str(failed) and IN_FRAME not in str(failed)
        with anyio.fail_after(30):  # a raising tool: its failure goes to the model
            done = final_task(await collect(alice, said("crash tool", context())))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert output_text(done).startswith("done: ")
    # the server's log has the details, a plain traceback: not the frames' local variables
    logged = b"".join(servers.log).decode(errors="replace")
    assert "ValueError: the model broke" in logged and IN_FRAME not in logged


async def test_a_conversation_started_over_agui_goes_on_over_a2a(servers: Pair) -> None:
    here = context()
    body = {
        "threadId": here,
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "from the page"}],
    }
    headers = {"authorization": f"Bearer {TOKENS['alice']}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        answer = await http.post(f"{servers.one}/", json=body)
    assert answer.status_code == 200 and "echo: from the page" in answer.text
    alice = await client_for(servers.two, "alice")
    task = final_task(await collect(alice, said("recall", here)))
    assert output_text(task) == "recall: from the page | recall"


async def test_hostile_requests_are_refused(servers: Pair) -> None:
    url = f"{servers.one}/a2a"
    good = {"authorization": f"Bearer {TOKENS['alice']}"}
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    call = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    one = {**good, "a2a-version": "1.0"}
    async with httpx.AsyncClient(timeout=30) as http:
        assert (await http.post(url, json=call)).status_code == 401  # no token
        wrong = {"authorization": "Bearer not-a-token-of-anyone"}
        assert (await http.post(url, json=call, headers=wrong)).status_code == 401
        plain = await http.post(url, content=json.dumps(call), headers={**good})
        assert plain.status_code == 415  # httpx sends no content-type for content=
        huge = {**call, "params": {"message": {**message, "parts": [{"text": "x" * 2_000_000}]}}}
        assert (await http.post(url, json=huge, headers=one)).status_code == 413
        bad_ids = [("taskId", "t\x00"), ("contextId", "c\x07"), ("contextId", "c" * 300)]
        for field, value in bad_ids:
            hostile = {**call, "params": {"message": {**message, field: value}}}
            error = (await http.post(url, json=hostile, headers=one)).json()["error"]
            assert error["code"] in (-32602, -32001) and field in error["message"], error
        file_part = {**message, "parts": [{"raw": "aGk=", "mediaType": "image/png"}]}
        error = (
            await http.post(url, json={**call, "params": {"message": file_part}}, headers=one)
        ).json()["error"]
        assert error["code"] == -32005 and "file parts" in error["message"]
        answers = {**message, "parts": [{"data": {"answers": [{"interrupt": 3}]}}]}
        error = (
            await http.post(url, json={**call, "params": {"message": answers}}, headers=one)
        ).json()["error"]
        assert error["code"] == -32602 and "answers.0" in error["message"]
        unknown = {**call, "params": {"message": {**message, "taskId": "task_nope"}}}
        error = (await http.post(url, json=unknown, headers=one)).json()["error"]
        assert error["code"] == -32001  # TaskNotFoundError
        state = {**message, "parts": [{"text": "hi"}, {"data": {"state": {"app:x": 1}}}]}
        error = (
            await http.post(url, json={**call, "params": {"message": state}}, headers=one)
        ).json()["error"]
        assert error["code"] == -32600 and "'app:x' cannot be written" in error["message"]


async def test_a_0_3_client_is_answered_in_0_3_shapes(servers: Pair) -> None:
    message = {
        "kind": "message",
        "messageId": "m03",
        "role": "user",
        "parts": [{"kind": "text", "text": "old client"}],
    }
    call = {"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {"message": message}}
    headers = {"authorization": f"Bearer {TOKENS['alice']}"}
    async with httpx.AsyncClient(timeout=30) as http:
        answer = (await http.post(f"{servers.one}/a2a", json=call, headers=headers)).json()
        result = answer["result"]
        assert result["kind"] == "task" and result["status"]["state"] == "completed"
        texts = [p["text"] for a in result["artifacts"] for p in a["parts"] if p["kind"] == "text"]
        assert texts == ["echo: old client"]
        get = {"jsonrpc": "2.0", "id": 8, "method": "tasks/get", "params": {"id": result["id"]}}
        again = (await http.post(f"{servers.two}/a2a", json=get, headers=headers)).json()
        assert again["result"]["status"]["state"] == "completed"


async def test_hostile_numbers_and_list_parameters_are_invalid_params(servers: Pair) -> None:
    # Each was answered -32603 (an internal error with a reference), or not refused at all.
    url = f"{servers.one}/a2a"
    headers = {
        "authorization": f"Bearer {TOKENS['alice']}",
        "a2a-version": "1.0",
        "content-type": "application/json",
    }

    async def error_of(method: str, params: str) -> dict[str, Any]:
        raw = f'{{"jsonrpc": "2.0", "id": 1, "method": "{method}", "params": {params}}}'
        async with httpx.AsyncClient(timeout=30) as http:
            answer = (await http.post(url, content=raw, headers=headers)).json()
        assert "error" in answer, answer
        error: dict[str, Any] = answer["error"]
        return error

    for number in ("NaN", "Infinity", "-Infinity", "1e400"):
        for data in (f'{{"x": [{number}]}}', f'{{"state": {{"k": {number}}}}}'):
            part = f'{{"messageId": "m", "role": "ROLE_USER", "parts": [{{"text": "hi"}}, {{"data": {data}}}]}}'  # noqa: E501
            error = await error_of("SendMessage", f'{{"message": {part}}}')
            assert error["code"] == -32602, error
            assert "message.parts[1].data" in error["message"] and "reference" not in str(error)
    for params, field in [
        ('{"pageToken": "garbage!!"}', "pageToken"),
        ('{"pageSize": 0}', "page size"),
        ('{"pageSize": -5}', "page size"),
        ('{"pageSize": 1000000}', "page size"),
        ('{"historyLength": -1}', "history length"),
    ]:
        error = await error_of("ListTasks", params)
        assert error["code"] == -32602 and field in error["message"], error
    error = await error_of("GetTask", '{"id": "task_nope", "historyLength": -1}')
    assert error["code"] == -32602 and "history length" in error["message"], error
    hi = '{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}'
    error = await error_of(
        "SendMessage", f'{{"message": {hi}, "configuration": {{"historyLength": -3}}}}'
    )
    assert error["code"] == -32602 and "history length" in error["message"], error


async def test_deep_json_and_long_task_ids_are_refused_without_exception_text(
    servers: Pair,
) -> None:
    url = f"{servers.one}/a2a"
    headers = {
        "authorization": f"Bearer {TOKENS['alice']}",
        "a2a-version": "1.0",
        "content-type": "application/json",
    }
    deep = "[" * 5000 + "]" * 5000
    part = f'{{"messageId": "m", "role": "ROLE_USER", "parts": [{{"data": {{"x": {deep}}}}}]}}'
    raw = f'{{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {{"message": {part}}}}}'
    async with httpx.AsyncClient(timeout=30) as http:
        for where in (url, f"{url}/v1/message:send"):
            body = raw if where == url else f'{{"message": {part}}}'
            answer = await http.post(where, content=body, headers=headers)
            assert answer.status_code == 400, answer.text[:300]
            error = answer.json()["error"]
            assert error["code"] == "invalid_json" and "nested" in error["message"]
            assert "recursion" not in answer.text
        long_id = "t" * 100_000
        get = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": long_id}}
        answer = await http.post(url, json=get, headers=headers)
        error = answer.json()["error"]
        assert error["code"] == -32001 and len(answer.text) < 2_000, answer.text[:300]


async def test_whole_numbers_a_client_sends_stay_integers(servers: Pair) -> None:
    # A data part travels as a protobuf Struct, whose numbers are doubles: a client's 3 was
    # written to state as 3.0 (a tool's `range(n)` then fails) and shown to the model as 3.0.
    url = f"{servers.one}/a2a"
    headers = {"authorization": f"Bearer {TOKENS['alice']}", "a2a-version": "1.0"}
    ctx = context()
    data = {"n": 3, "half": 1.5, "list": [1, -2, 2.5], "big": 2**60}
    parts = [{"text": "hi"}, {"data": {"state": data}}, {"data": {"n": 3, "half": 1.5}}]
    message = {"messageId": "m", "role": "ROLE_USER", "contextId": ctx, "parts": parts}
    call = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    async with httpx.AsyncClient(timeout=30) as http:
        answer = (await http.post(url, json=call, headers=headers)).json()
        task = answer["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", answer
        output = "".join(p.get("text", "") for a in task["artifacts"] for p in a["parts"])
        assert output.startswith("echo: ")  # the data part, as the model read it
        shown = json.loads(output.removeprefix("echo: "))
        assert shown == {"n": 3, "half": 1.5} and type(shown["n"]) is int
        view = await http.get(f"{servers.one}/threads/{ctx}", headers=headers)
        state = view.json()["state"]
    assert state["n"] == 3 and type(state["n"]) is int
    assert state["half"] == 1.5 and state["list"] == [1, -2, 2.5]
    assert type(state["list"][0]) is int
    assert type(state["big"]) is float  # past 2**53 a double is no exact integer: kept as sent
