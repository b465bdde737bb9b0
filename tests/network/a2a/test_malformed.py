"""Malformed JSON-RPC calls a stranger sends are answered with the error A2A names for them
(real uvicorn on 127.0.0.1, plain HTTP): invalid params (-32602) naming the field, never an
internal error (-32603) carrying a Python exception's text, nor another method's error."""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from agents import Agent, ScriptedModel
from examples.a2a_test_agent import network as cashier
from network import Network
from network.a2a import app
from network.a2a.live import MAX_SUBSCRIBERS
from tests.network.agui.live import serve

JSON = {"content-type": "application/json"}
ONE = {**JSON, "a2a-version": "1.0"}


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    model = ScriptedModel(lambda request: "ok")
    asgi = app(Network("echo", agents=[Agent("echo", model=model)]))
    with serve(asgi, lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def error_of(http: httpx.Client, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
    """The JSON-RPC error answering `body`, as JSON or as a stream's one event."""
    answer = http.post("/", content=body, headers=headers)
    text = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        (text,) = [line[len("data:") :] for line in text.splitlines() if line.startswith("data:")]
    error: dict[str, Any] = json.loads(text)["error"]
    return error


def test_a_call_naming_no_task_is_invalid_params_naming_id(http: httpx.Client) -> None:
    # GetTask, CancelTask and SubscribeToTask without an `id` (or with `params` no object)
    # looked up the task '' and answered TaskNotFoundError (-32001, "no task ''")
    for method in ("GetTask", "CancelTask", "SubscribeToTask"):
        for params in ("{}", '{"id": ""}', '["task_1"]'):
            body = f'{{"jsonrpc": "2.0", "id": 1, "method": "{method}", "params": {params}}}'
            error = error_of(http, body.encode(), ONE)
            assert error["code"] == -32602, (method, params, error)
            assert "'field': 'id'" in str(error["data"]), (method, params, error)


def test_a_0_3_call_the_sdk_cannot_read_is_invalid_params_naming_the_field(
    http: httpx.Client,
) -> None:
    # The SDK's 0.3 adapter answered a value its conversion to 1.0 cannot carry with -32603
    # and Python's text ("'utf-8' codec can't encode character...", "int too large to
    # convert to float", "Value out of range"), and params that are no 0.3 params with
    # -32600 and pydantic's whole report
    lone, big, text = "\ud800", int("9" * 400), {"kind": "text", "text": "hi"}

    def message(part: Any = text, **extra: Any) -> dict[str, Any]:
        return {"messageId": "m", "role": "user", "kind": "message", "parts": [part], **extra}

    cases: list[tuple[str, dict[str, Any], str]] = [
        (
            "message/send",
            {"message": message({"kind": "text", "text": lone})},
            "params.message.parts.0.text holds a lone surrogate",
        ),
        (
            "message/stream",
            {"message": message(contextId=lone)},
            "params.message.contextId holds a lone surrogate",
        ),
        (
            "message/send",
            {"message": message({"kind": "data", "data": {"x": big}})},
            "params.message.parts.0.data.x is a number past a double's range",
        ),
        (
            "message/send",
            {"message": message(), "metadata": {lone: 1}},
            "params.metadata has a key holding a lone surrogate",
        ),
        (
            "message/send",
            {"message": message(), "configuration": {"historyLength": 2**40}},
            "params.configuration.historyLength is out of range",
        ),
        ("tasks/get", {"id": lone}, "params.id holds a lone surrogate"),
        ("tasks/get", {"id": "t", "historyLength": 2**40}, "params.historyLength is out of range"),
        ("tasks/cancel", {"id": lone}, "params.id holds a lone surrogate"),
        ("tasks/resubscribe", {"id": lone}, "params.id holds a lone surrogate"),
        ("tasks/get", {}, "params.id: Field required"),
        (
            "message/send",
            {"message": message({"kind": "video", "x": 1})},
            "params.message.parts.0.kind: 'video' is no kind of part",
        ),
        (
            "message/send",
            {"message": message({"kind": "data", "data": [1]})},
            "params.message.parts.0.data: Input should be a valid dictionary",
        ),
    ]
    for method, params, said in cases:
        body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": method, "params": params})
        answer = http.post("/", content=body.encode(), headers=JSON)
        assert answer.headers["content-type"] == "application/json", (method, answer.text)
        reply = answer.json()
        assert reply["id"] == 5 and reply["error"]["code"] == -32602, (method, params, reply)
        assert said in reply["error"]["message"], (said, reply)
        assert "codec" not in answer.text and "pydantic" not in answer.text, answer.text
    # a 0.3 call that is itself malformed is still the SDK's Invalid Request
    body = b'{"jsonrpc": "2.0", "id": 5, "method": "tasks/get", "params": {"id": "t"}, "x": 1}'
    assert error_of(http, body, JSON)["code"] == -32600
    # and a good one is answered
    good = {"jsonrpc": "2.0", "id": 6, "method": "message/send", "params": {"message": message()}}
    result = http.post("/", json=good, headers=JSON).json()["result"]
    assert result["status"]["state"] == "completed", result


@pytest.mark.anyio
async def test_a_task_takes_a_bounded_number_of_subscriptions_at_once() -> None:
    # Every SubscribeToTask was taken: a stranger could hold as many streams (each a queue,
    # a connection, and for a task of another process a read of its record twice a second)
    # as it liked on one task
    release = threading.Event()

    async def slow(request: Any) -> str:
        while not release.is_set():
            await anyio.sleep(0.02)
        return "done"

    asgi = app(Network("slow", agents=[Agent("slow", model=ScriptedModel(slow))]))
    limits = httpx.Limits(max_connections=MAX_SUBSCRIBERS + 4)
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    send = {"message": message, "configuration": {"returnImmediately": True}}
    with serve(asgi, lifespan="on") as url:
        async with (
            httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as http,
            contextlib.AsyncExitStack() as streams,
        ):
            sent = await http.post("/", json=rpc("SendMessage", send), headers=ONE)
            task_id = sent.json()["result"]["task"]["id"]
            subscribe = rpc("SubscribeToTask", {"id": task_id})
            kept: list[Any] = []

            async def first_event() -> tuple[Any, dict[str, Any]]:
                stream = await streams.enter_async_context(
                    http.stream("POST", "/", json=subscribe, headers=ONE)
                )
                if stream.headers["content-type"] == "application/json":
                    return stream, json.loads(await stream.aread())
                lines = stream.aiter_lines()
                kept.append(lines)  # the stream stays open while its reader lives
                async for line in lines:
                    if line.startswith("data:"):
                        return stream, json.loads(line[len("data:") :])
                raise AssertionError("the stream ended with no event")

            held = [await first_event() for _ in range(MAX_SUBSCRIBERS)]
            assert all(event["result"]["task"]["id"] == task_id for _, event in held)
            _, refused = await first_event()
            error = refused["error"]
            assert error["code"] == -32603, error
            assert "server_busy" in str(error["data"]) and "try again later" in error["message"]
            await held[0][0].aclose()  # one leaves: its place is free again
            with anyio.fail_after(5):  # once the server sees it gone
                while "error" in (again := (await first_event())[1]):
                    await anyio.sleep(0.05)
            assert again["result"]["task"]["id"] == task_id, again
            release.set()
    # every subscription let go when its stream ended
    assert asgi.state.handler.subscriptions.counts == {}


class Cashier:
    """`examples/a2a_test_agent.py` served: "pay N" waits for an approval."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def send(self, parts: list[Any], **ids: str) -> dict[str, Any]:
        message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": parts, **ids}
        answer: dict[str, Any] = self.http.post(
            "/", json=rpc("SendMessage", {"message": message}), headers=ONE
        ).json()
        return answer

    def waiting(self) -> tuple[dict[str, Any], str]:
        """A task waiting for the approval of a payment of 5, and the approval's id."""
        task = self.send([{"text": "pay 5"}])["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
        (asked,) = [p["data"] for p in task["status"]["message"]["parts"] if "data" in p]
        return task, asked["interrupts"][0]["id"]

    def state(self, task_id: str) -> str:
        got = self.http.post("/", json=rpc("GetTask", {"id": task_id}), headers=ONE).json()
        state: str = got["result"]["status"]["state"]
        return state


@pytest.fixture(scope="module")
def till() -> Iterator[Cashier]:
    with (
        serve(app(cashier), lifespan="on") as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        yield Cashier(http)


def test_an_approval_is_a_json_boolean_nothing_else(till: Cashier) -> None:
    # `"approved": "yes"` (or "on", "1", 1) was read as true and the call ran, where AG-UI's
    # resume takes a JSON boolean only: a client's word was taken for an approval
    task, interrupt = till.waiting()
    for word in ("yes", "true", "on", "1", 1, None):
        answers = [{"data": {"answers": [{"interrupt": interrupt, "approved": word}]}}]
        error = till.send(answers, taskId=task["id"])["error"]
        assert error["code"] == -32602, (word, error)
        assert "answers.0.approved" in error["message"], (word, error)
    assert till.state(task["id"]) == "TASK_STATE_INPUT_REQUIRED"
    answers = [{"data": {"answers": [{"interrupt": interrupt, "approved": True}]}}]
    done = till.send(answers, taskId=task["id"])["result"]["task"]
    (state,) = [a for a in done["artifacts"] if a["artifactId"] == "state"]
    assert state["parts"][0]["data"] == {"paid": 5}, done  # paid once, when approved


def test_edited_arguments_go_with_an_approval_only(till: Cashier) -> None:
    # Beside a rejection they were dropped without a word (the task rejected, the client
    # believing its edit read), where AG-UI's resume refuses `editedArgs` with approved false
    task, interrupt = till.waiting()
    entry = {"interrupt": interrupt, "approved": False, "arguments": {"amount": 1}}
    error = till.send([{"data": {"answers": [entry]}}], taskId=task["id"])["error"]
    assert error["code"] == -32602 and "answers.0" in error["message"], error
    assert "approved: true" in error["message"], error
    assert till.state(task["id"]) == "TASK_STATE_INPUT_REQUIRED"  # nothing answered
    edited = {**entry, "approved": True}
    done = till.send([{"data": {"answers": [edited]}}], taskId=task["id"])["result"]["task"]
    (state,) = [a for a in done["artifacts"] if a["artifactId"] == "state"]
    assert state["parts"][0]["data"] == {"paid": 1}, done  # the edit used, with the approval


def test_calls_the_sdk_answered_with_an_internal_error_or_not_at_all(http: httpx.Client) -> None:
    # An id holding a lone surrogate: a 500 with no JSON-RPC body (1.0), a dropped
    # connection (0.3), "Exception in ASGI application" in the log, as the answer repeating
    # the id failed to encode
    lone = "\\ud800"
    for method, params, headers in [
        ("GetTask", '{"id": "t"}', ONE),
        ("tasks/get", '{"id": "t"}', JSON),
        ("SendStreamingMessage", '{"message": {"role": "ROLE_USER", "parts": []}}', ONE),
        ("Nope", "{}", JSON),
    ]:
        body = f'{{"jsonrpc": "2.0", "id": "{lone}", "method": "{method}", "params": {params}}}'
        answer = http.post("/", content=body.encode(), headers=headers)
        assert answer.status_code == 200, (method, answer.text)
        reply = answer.json()
        assert reply["id"] is None and reply["error"]["code"] == -32600, (method, reply)
        assert "id holds a lone surrogate" in reply["error"]["message"], reply
    # A body that is not UTF-8: -32603 with Python's "'utf-8' codec can't decode byte 0xff",
    # or over REST a 500
    for path, body in [
        ("/", b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "\xff"}}'),
        ("/v1/message:send", b'{"message": {"role": "ROLE_USER", "parts": [{"text": "\xff"}]}}'),
    ]:
        answer = http.post(path, content=body, headers=ONE)
        assert answer.status_code == 400, (path, answer.text)
        assert answer.json()["error"]["code"] == "invalid_json", answer.text
        assert "not UTF-8" in answer.text and "codec" not in answer.text, answer.text
    # A 0.3 method under a 1.0 header (or one naming no version): -32603, "A2A version '1.0'
    # is not supported by this handler"
    get = b'{"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"id": "t"}}'
    for version in ("1.0", "banana"):
        error = error_of(http, get, {**JSON, "a2a-version": version})
        assert error["code"] == -32009 and "'GetTask'" in error["message"], (version, error)
    for version in ("0.3", "0.3.0"):  # 0.3's own header is served
        assert error_of(http, get, {**JSON, "a2a-version": version})["code"] == -32001


def test_the_extended_card_the_card_does_not_declare_is_an_unsupported_operation(
    http: httpx.Client,
) -> None:
    # It was ExtendedAgentCardNotConfiguredError (-32007), which A2A 1.0 (§3.3.4) keeps for
    # an agent that declares an extended card it has not configured
    card = http.get("/.well-known/agent-card.json").json()
    assert not card["capabilities"].get("extendedAgentCard"), card["capabilities"]
    for method, headers in (
        ("GetExtendedAgentCard", ONE),
        ("agent/getAuthenticatedExtendedCard", JSON),
    ):
        body = json.dumps(rpc(method, {})).encode()
        error = error_of(http, body, headers)
        assert error["code"] == -32004 and "no extended agent card" in error["message"], error
    answer = http.get("/v1/extendedAgentCard", headers={"a2a-version": "1.0"})
    assert answer.status_code == 400, answer.text
    assert "UNSUPPORTED_OPERATION" in answer.text, answer.text


def test_a_message_asking_for_push_notifications_is_refused(http: httpx.Client) -> None:
    # The card declares none, and the ask was ignored: the task ran, and a client waiting
    # for its webhook waited for ever (A2A 1.0's PushNotificationNotSupportedError, §3.3.2)
    sent = uuid.uuid4().hex
    message = {"messageId": sent, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    push = {"taskPushNotificationConfig": {"url": "https://client.example/hook"}}
    send = {"message": message, "configuration": {**push, "returnImmediately": True}}
    for method in ("SendMessage", "SendStreamingMessage"):
        error = error_of(http, json.dumps(rpc(method, send)).encode(), ONE)
        assert error["code"] == -32003 and "no push notifications" in error["message"], error
    old = {
        "message": {
            **message,
            "kind": "message",
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}],
        },
        "configuration": {"pushNotificationConfig": {"url": "https://client.example/hook"}},
    }
    error = error_of(http, json.dumps(rpc("message/send", old)).encode(), JSON)
    assert error["code"] == -32003, error
    listed = http.post("/", json=rpc("ListTasks", {}), headers=ONE).json()["result"]
    assert not any(t["history"][0]["messageId"] == sent for t in listed["tasks"]), listed


def test_a_send_returning_at_once_keeps_the_history_length_asked(http: httpx.Client) -> None:
    # `historyLength: 0` was obeyed by a blocking SendMessage and ignored by one with
    # `returnImmediately` (the task came back with its history)
    for immediately in (False, True):
        message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        configuration = {"historyLength": 0, "returnImmediately": immediately}
        send = rpc("SendMessage", {"message": message, "configuration": configuration})
        task = http.post("/", json=send, headers=ONE).json()["result"]["task"]
        assert "history" not in task, (immediately, task)
