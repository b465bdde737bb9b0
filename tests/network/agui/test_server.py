"""The AG-UI server in process (httpx's ASGI transport): wire format and request handling."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from agents import Agent, ScriptedModel, TextDelta, ToolContext, call, tool
from network import Network
from network.agui import app
from tests.network.agui.networks import PANCAKES, codegen_network, recipe_network
from tests.network.agui.protocol import parse_sse, replay

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


def body(thread: str, run: str, text: str | None = "go", **extra: Any) -> dict[str, Any]:
    messages = [{"id": f"{run}-u", "role": "user", "content": text}] if text else []
    return {"threadId": thread, "runId": run, "messages": messages, **extra}


class Client:
    def __init__(self, asgi: Any) -> None:
        self.asgi = asgi
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=asgi), base_url="http://t", timeout=30
        )

    async def post(self, payload: Any, **kwargs: Any) -> httpx.Response:
        if isinstance(payload, dict):
            return await self.http.post("/", json=payload, **kwargs)
        headers = {"content-type": "application/json", **kwargs.pop("headers", {})}
        return await self.http.post("/", content=payload, headers=headers, **kwargs)

    async def run(self, payload: dict[str, Any], *, state: Any = None, **kwargs: Any) -> Any:
        response = await self.post(payload)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/event-stream")
        return replay(
            parse_sse(response.text),
            state=state if state is not None else payload.get("state") or {},
            thread_id=payload["threadId"],
            run_id=payload["runId"],
            **kwargs,
        )

    def thread(self, thread_id: str) -> Any:
        return self.asgi.state.threads.peek(thread_id)


async def test_a_run_streams_encoder_frames_and_echoes_the_ids() -> None:
    client = Client(app(codegen_network()))
    response = await client.post(body("thread-1", "run-1"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    text = response.text
    assert text.startswith('data: {"type":"RUN_STARTED","threadId":"thread-1","runId":"run-1"')
    assert "\r" not in text and text.endswith("\n\n")
    for frame in text.split("\n\n")[:-1]:
        payload = frame.removeprefix("data: ")
        assert frame.startswith("data: ") and "\n" not in payload
        assert "_" not in "".join(json.loads(payload))  # camelCase keys only
    run = replay(parse_sse(text), thread_id="thread-1", run_id="run-1")
    assert run.types.count("STATE_DELTA") >= 4
    assert run.state == client.thread("thread-1").state
    assert run.state["review"]["approved"] is True


async def test_the_client_messages_become_the_run_input() -> None:
    model = ScriptedModel(lambda request: "ok")
    client = Client(app(Network("echo", agents=[Agent("echo", model=model)])))
    messages = [
        {"id": "1", "role": "user", "content": "hello"},
        {"id": "2", "role": "assistant", "content": "hi, what now?"},
        {"id": "3", "role": "user", "content": [{"type": "text", "text": "write add()"}]},
    ]
    await client.run({"threadId": "t", "runId": "r", "messages": messages})
    (request,) = model.requests
    assert [(m.role, m.content) for m in request.history] == [
        ("user", "hello"),
        ("assistant", "hi, what now?"),
        ("user", "write add()"),
    ]


async def test_an_attachment_the_model_cannot_read_is_named_not_dropped() -> None:
    # CopilotKit's chat sends an attached file as a media part beside the text; the network's
    # messages are text, so the model is told what it was not given instead of answering as
    # if it had seen it, and the capabilities answer says no such input is read.
    model = ScriptedModel(lambda request: "I cannot see images here.")
    client = Client(app(Network("echo", agents=[Agent("echo", model=model)])))
    photo = {
        "type": "image",
        "source": {"type": "data", "value": "iVBORw0K", "mimeType": "image/png"},
    }
    content = [{"type": "text", "text": "What is in this photo?"}, photo]
    message = {"id": "1", "role": "user", "content": content}
    await client.run({"threadId": "t", "runId": "r", "messages": [message]})
    (request,) = model.requests
    unread = "[image (image/png) attachment not read: this server passes text only]"
    assert request.history[-1].content == f"What is in this photo?\n{unread}"
    capabilities = (await client.http.get("/capabilities")).json()
    assert not any(capabilities["multimodal"]["input"].values())


async def test_the_client_may_write_thread_and_user_keys() -> None:
    network = codegen_network()
    client = Client(app(network))
    state = {"topic": "adders", "user:language": "python"}
    run = await client.run(body("t", "r1", state=state))
    assert run.events[1]["snapshot"] == state  # the run started from the client's writes
    assert run.state["topic"] == "adders" and run.state["user:language"] == "python"
    # the next request sends the whole state back: unchanged keys are not writes, an omitted
    # key is not deleted, a changed one is written
    again = {**run.state, "topic": "multipliers"}
    again.pop("plan")
    second = await client.run(body("t", "r2", state=again))
    assert second.events[1]["snapshot"]["topic"] == "multipliers"
    assert second.events[1]["snapshot"]["plan"] == run.state["plan"]


async def test_invalid_client_state_is_refused_naming_the_key() -> None:
    model = ScriptedModel(lambda request: "never")
    network = Network(
        "typed", agents=[Agent("a", model=model)], state_schema={"count": {"type": int}}
    )
    client = Client(app(network))
    response = await client.post(body("t", "r", state={"count": "many"}))
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_state" and error["key"] == "count"
    assert "count" in error["message"] and "int" in error["message"]
    assert model.requests == [] and client.thread("t") is None  # refused: nothing created
    response = await client.post(body("t", "r", state=["not", "an", "object"]))
    assert response.status_code == 422


@pytest.mark.parametrize("key", ["app:flags", "temp:scratch"])
async def test_app_and_temp_keys_from_a_client_are_refused(key: str) -> None:
    model = ScriptedModel(lambda request: "never")
    client = Client(app(Network("n", agents=[Agent("a", model=model)])))
    response = await client.post(body("t", "r", state={"topic": "x", key: 1}))
    assert response.status_code == 403
    assert response.json()["error"]["key"] == key
    assert model.requests == [] and client.thread("t") is None


async def test_an_app_key_the_client_only_echoes_is_not_a_write() -> None:
    network = Network("n", agents=[Agent("a", model=ScriptedModel(lambda r: "ok"))])
    asgi = app(network)
    client = Client(asgi)
    asgi.state.threads.get("t").state = {"app:motd": "hello"}  # written by the server earlier
    run = await client.run(body("t", "r", state={"app:motd": "hello", "topic": "x"}))
    assert run.state == {"app:motd": "hello", "topic": "x"}


def as_javascript_holds(value: Any) -> Any:
    """`value` (JSON data) as a JavaScript client sends it back: every number a double."""
    return json.loads(json.dumps(value), parse_int=lambda digits: int(float(digits)))


async def test_an_integer_a_javascript_client_holds_rounded_is_not_a_write() -> None:
    # A 64-bit id comes back from @ag-ui/client rounded to a double. Before, that was a
    # write: the server's value was rounded too, and an app: key's was refused (403) on
    # every later request of the thread.
    @tool
    def remember(ctx: ToolContext) -> str:
        """Remember the order."""
        ctx.kv.set("order_id", 1_700_000_000_000_000_001)
        ctx.kv.set("app:sequence", [2**53 + 1])
        return "ok"

    def script(request: Any) -> Any:
        return "ok" if request.history[-1].role == "tool" else call("remember")

    def route(ctx: Any) -> Any:
        last = ctx.last_result
        return "clerk" if last is None or last.tool_calls else None

    clerk = Agent("clerk", tools=[remember], model=ScriptedModel(script))
    client = Client(app(Network("orders", agents=[clerk], router=route)))
    first = await client.run(body("t", "r1"))
    held = as_javascript_holds(first.state)
    assert held["order_id"] != first.state["order_id"]  # what the test is about
    second = await client.run(body("t", "r2", state=held), state=held)
    assert second.events[1]["snapshot"] == first.state  # the run starts from the exact ids
    # a value the client did change is still a write
    third = await client.run(body("t", "r3", state={**held, "order_id": 7}))
    assert third.events[1]["snapshot"]["order_id"] == 7


@pytest.mark.parametrize("store", [None, "sqlite"])
async def test_state_a_browser_echoes_with_big_ints_rounded_is_not_a_write(
    store: str | None, tmp_path: Any
) -> None:
    # A JavaScript client reads JSON numbers as doubles: an int past 2**53 the server streamed
    # comes back rounded with the next request. Before, that echo was a client write: an
    # app: key's was refused (403) on every later run of the thread (CopilotKit's chat hung),
    # a thread key's silently overwrote the server's value with the rounded one.
    @tool
    def stamp(ctx: ToolContext) -> str:
        """Stamp the order."""
        ctx.kv.set("order_id", 2**60 + 1)
        ctx.kv.set("app:last_ns", 1764550000123456789)
        ctx.kv.set("lines", [{"sku": 2**53 + 1}])
        return "stamped"

    def script(request: Any) -> Any:
        return call("stamp") if request.history[-1].content == "go" else "done"

    agent = Agent("a", tools=[stamp], model=ScriptedModel(script))
    network = Network(
        "n",
        agents=[agent],
        router=lambda c: agent if c.last_result is None or c.last_result.tool_calls else None,
    )
    options = {} if store is None else {"store": str(tmp_path / "threads.db")}
    client = Client(app(network, **options))
    first = await client.run(body("t", "r1"))
    assert first.state["order_id"] == 2**60 + 1
    # what JSON.stringify sends back of the doubles JSON.parse made of them
    echoed = {"order_id": 1152921504606847000, "app:last_ns": 1764550000123456800}
    echoed["lines"] = [{"sku": 9007199254740992}]
    second = await client.run(body("t", "r2", text="again", state=echoed), state=first.state)
    assert second.state["order_id"] == 2**60 + 1  # the server's value, not the rounded one
    assert second.state["lines"] == [{"sku": 2**53 + 1}]
    assert (await client.post(body("t", "r3", state={"order_id": 7}))).status_code == 200
    assert (await client.post(body("t2", "r4", state={"app:last_ns": 1}))).status_code == 403


async def test_oversized_and_malformed_bodies_are_refused() -> None:
    model = ScriptedModel(lambda r: "never")
    network = Network("n", agents=[Agent("a", model=model)])
    small = Client(app(network, max_body_bytes=300))
    big = body("t", "r", text="x" * 400)
    response = await small.post(big)
    assert response.status_code == 413 and response.json()["error"]["code"] == "body_too_large"

    async def chunks() -> Any:  # no Content-Length: counted while reading
        yield json.dumps(big).encode()

    assert (await small.post(chunks())).status_code == 413
    default = Client(app(network))
    assert (await default.post(body("t", "r", text="x" * (1024 * 1024)))).status_code == 413
    assert (await default.post(body("t", "r", text="x" * 1000))).status_code == 200
    response = await default.post(b"{not json")
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_request"
    response = await default.post({"threadId": "t", "messages": []})  # no runId
    assert response.status_code == 422 and "runId" in response.json()["error"]["message"]
    assert len(model.requests) == 1


async def test_a_run_that_fails_ends_its_stream_with_run_error() -> None:
    model = ScriptedModel([RuntimeError("provider down")])
    client = Client(app(Network("n", agents=[Agent("a", model=model)])))
    run = await client.run(body("t", "r"), allow_error=True)
    assert run.types[-1] == "RUN_ERROR" and run.error["code"] == "internal_error"
    assert "provider down" not in run.error["message"]  # not the library's: not shown
    assert client.thread("t").run_id is None  # the thread is free again


async def test_one_run_at_a_time_per_thread() -> None:
    asgi = app(Network("n", agents=[Agent("a", model=ScriptedModel(lambda r: "ok"))]))
    client = Client(asgi)
    asgi.state.threads.get("t").run_id = "run-under-way"
    response = await client.post(body("t", "r"))
    assert response.status_code == 409 and response.json()["error"]["code"] == "thread_busy"
    assert response.headers["retry-after"] == "1"  # docs/serving.md: it had none
    assert (await client.post(body("other", "r"))).status_code == 200


async def test_confirmation_accepted_over_http() -> None:
    calls: list[str] = []
    client = Client(app(recipe_network(confirm=True, calls=calls)))
    first = await client.run(body("t", "r1", state={"servings": 2}))
    (interrupt,) = first.finished["outcome"]["interrupts"]
    assert first.state == {"servings": 2, "recipe": PANCAKES}  # the proposal, shown
    assert client.thread("t").state == {"servings": 2}  # not applied on the server
    # a request that ignores the pending interrupt gets a clear error, and changes nothing
    ignored = await client.post(body("t", "r2", text="something else", state=first.state))
    assert ignored.status_code == 409
    error = ignored.json()["error"]
    assert error["code"] == "interrupt_pending" and interrupt["id"] in error["message"]
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
    second = await client.run(
        body("t", "r3", text=None, state=first.state, resume=resume), state=first.state
    )
    assert calls == ["Pancakes"]
    assert second.state == client.thread("t").state == {"servings": 2, "recipe": PANCAKES}
    assert second.of("TOOL_CALL_RESULT")[0]["toolCallId"] == interrupt["toolCallId"]
    assert "outcome" not in second.finished


async def test_confirmation_rejected_restores_the_server_checkpoint() -> None:
    calls: list[str] = []
    old = {"title": "Toast", "steps": [], "minutes": 2}
    client = Client(app(recipe_network(confirm=True, calls=calls)))
    first = await client.run(body("t", "r1", state={"recipe": old}))
    (interrupt,) = first.finished["outcome"]["interrupts"]
    optimistic = first.state
    assert optimistic["recipe"] == PANCAKES
    resume = [{"interruptId": interrupt["id"], "status": "cancelled"}]
    second = await client.run(
        body("t", "r2", text=None, state=optimistic, resume=resume), state=optimistic
    )
    assert calls == []
    assert second.events[2] == {"type": "STATE_SNAPSHOT", "snapshot": {"recipe": old}}
    assert second.state == client.thread("t").state == {"recipe": old}


async def test_malformed_or_unexpected_resume_is_refused() -> None:
    client = Client(app(recipe_network(confirm=True)))
    first = await client.run(body("t", "r1"))
    (interrupt,) = first.finished["outcome"]["interrupts"]
    bad = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "yes please"}]
    response = await client.post(body("t", "r2", resume=bad))
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_resume"
    stray = [{"interruptId": "int_nope", "status": "resolved", "payload": True}]
    assert (await client.post(body("fresh", "r3", resume=stray))).status_code == 409
    assert client.thread("t").interrupts[0].id == interrupt["id"]  # still pending


async def test_an_approval_is_a_json_boolean_nothing_else() -> None:
    # refused already, but as "payload must be {...} or a boolean": which field was wrong
    # went unsaid. The call runs on true only, and waits through every refusal.
    calls: list[str] = []
    client = Client(app(recipe_network(confirm=True, calls=calls)))
    first = await client.run(body("t", "r1"))
    (interrupt,) = first.finished["outcome"]["interrupts"]
    for word in ("yes", "true", "on", "1", 1, 0, None, [True]):
        payload = {"approved": word}
        bad = [{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}]
        response = await client.post(body("t", "r2", resume=bad))
        assert response.status_code == 422, word
        error = response.json()["error"]
        assert error["code"] == "invalid_resume" and error["key"] == "approved", word
        assert "approved must be a JSON boolean" in error["message"], word
    for word in ("yes", "true", 1, 0):  # a bare payload, as a boolean may be sent
        bad = [{"interruptId": interrupt["id"], "status": "resolved", "payload": word}]
        assert (await client.post(body("t", "r3", resume=bad))).status_code == 422, word
    assert calls == [] and client.thread("t").interrupts[0].id == interrupt["id"]  # waits
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
    await client.run(body("t", "r4", text=None, resume=resume))
    assert calls == ["Pancakes"]


async def test_a_rejection_whose_reason_is_not_text_is_refused_naming_it() -> None:
    # It was dropped without a word: the model was told nothing of why, and the client never
    # learnt that its answer was not the one the interrupt's responseSchema asks for.
    client = Client(app(recipe_network(confirm=True)))
    first = await client.run(body("t", "r1"))
    (interrupt,) = first.finished["outcome"]["interrupts"]
    payload = {"approved": False, "reason": {"why": "too sweet"}}
    bad = [{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}]
    response = await client.post(body("t", "r2", resume=bad))
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_resume" and error["key"] == "reason"
    assert client.thread("t").interrupts[0].id == interrupt["id"]  # still pending
    huge = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "x" * 100_000}]
    response = await client.post(body("t", "r3", resume=huge))
    assert response.status_code == 422 and len(response.text) < 1000  # not echoed whole


async def test_a_client_that_disconnects_cancels_its_run() -> None:
    class Stalling:
        name = "stalling"

        async def complete(self, request: Any, on_chunk: Any = None) -> Any:
            await on_chunk(TextDelta("thinking"))
            await anyio.sleep(30)

    asgi = app(Network("n", agents=[Agent("a", model=Stalling())]))
    payload = json.dumps(body("t", "r")).encode()
    gone = anyio.Event()
    requested = False
    frames: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": payload, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        frames.append(message.get("body", b""))
        if b"TEXT_MESSAGE_CONTENT" in message.get("body", b""):
            gone.set()  # the client leaves as soon as the text starts

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    with anyio.fail_after(5):  # the run would take 30 s if it were not cancelled
        await asgi(scope, receive, send)
    record = asgi.state.threads.peek("t")
    assert record.run_id is None and record.runs == 1
    assert b"RUN_FINISHED" not in b"".join(frames)
