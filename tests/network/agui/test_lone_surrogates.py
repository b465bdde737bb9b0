"""A lone surrogate anywhere in a client's body is a 422 naming the field that holds it and
saying why (`network.agui.lone_surrogates`), over real HTTP, in the documented error shape;
nothing runs, the thread is as it was. Before, every such body got the JSON parser's "not a
RunAgentInput: body: Invalid JSON: unexpected end of hex escape at line 1 column 95"."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel
from agents.models.scripted import call
from network import Network
from network.agui import app
from network.agui.lone_surrogates import first_lone_surrogate
from tests.network.agui.live import run_body, serve
from tests.network.agui.protocol import parse_sse

pytestmark = pytest.mark.usefixtures("quiet_logs")

HI = '[{"id": "u", "role": "user", "content": "hi"}]'


def body(*, thread: str = '"t-1"', messages: str = HI, **more: str) -> bytes:
    """A RunAgentInput as JSON text, each value given as its JSON spelling (escapes kept)."""
    fields = [f'"threadId": {thread}', '"runId": "r"', f'"messages": {messages}']
    fields += [f'"{name}": {value}' for name, value in more.items()]
    return ("{" + ", ".join(fields) + "}").encode()


CASES = {
    "thread id": (body(thread='"a\\ud800b"'), "invalid_thread_id", "threadId"),
    "message content": (
        body(messages='[{"id": "u", "role": "user", "content": "hi \\ud800"}]'),
        "invalid_request",
        "messages.0.content",
    ),
    "message id": (
        body(messages='[{"id": "u\\udc00", "role": "user", "content": "hi"}]'),
        "invalid_request",
        "messages.0.id",
    ),
    "CESU-8 bytes": (
        body(messages='[{"id": "u", "role": "user", "content": "hi \\ud800"}]').replace(
            b"\\ud800", b"\xed\xa0\x80"
        ),
        "invalid_request",
        "messages.0.content",
    ),
    "state value": (body(state='{"k": {"deep": ["ok", "v\\ud800"]}}'), "invalid_state", "k"),
    "state key": (body(state='{"k\\ud800": 1}'), "invalid_state", "k\\ud800"),
    "forwarded props": (
        body(forwardedProps='{"x": "\\udfff"}'),
        "invalid_request",
        "forwardedProps.x",
    ),
    "tool name": (
        body(tools='[{"name": "a\\ud800", "description": "d", "parameters": {}}]'),
        "invalid_request",
        "tools.0.name",
    ),
}


def test_a_lone_surrogate_is_named_where_it_is_and_runs_nothing() -> None:
    model = ScriptedModel(lambda request: "hello")
    asgi = app(Network("echo", agents=[Agent("echo", model=model)]))
    with serve(asgi) as url, httpx.Client(base_url=url, timeout=30) as client:
        for label, (content, code, key) in CASES.items():
            response = client.post(
                "/", content=content, headers={"content-type": "application/json"}
            )
            assert response.status_code == 422, label
            assert response.content.decode("utf-8")  # the error itself is UTF-8 text
            assert set(response.json()) == {"error"}, label
            error = response.json()["error"]
            assert set(error) == {"code", "message", "key"}, label
            assert (error["code"], error["key"]) == (code, key), label
            assert "lone surrogate" in error["message"], label
            assert "hex escape" not in error["message"], label
            if code != "invalid_thread_id":
                assert "not valid UTF-8 text" in error["message"], label
        assert not model.requests and asgi.state.threads.peek("t-1") is None
        stray = client.post(
            "/",
            content=body().replace(b'"hi"', b'"hi \xff"'),
            headers={"content-type": "application/json"},
        )
        assert stray.status_code == 422
        assert "not valid UTF-8 text (byte" in stray.json()["error"]["message"]
        broken = client.post(
            "/", content=b'{"threadId": ', headers={"content-type": "application/json"}
        )
        assert broken.status_code == 422  # other broken JSON keeps the parser's message
        assert "Invalid JSON" in broken.json()["error"]["message"]
        good = client.post("/", content=body(), headers={"content-type": "application/json"})
        assert [e["type"] for e in parse_sse(good.text)][-1] == "RUN_FINISHED"


def test_the_first_lone_surrogate_in_document_order() -> None:
    data = json.loads('{"a": ["ok", {"b\\ud800": "x", "c": "\\udc00"}], "d": "\\ud801"}')
    assert first_lone_surrogate(data) == (("a", 1, "b\ud800"), "b\ud800")
    assert first_lone_surrogate({"a": ["ok", 1, None, {"b": "fine"}]}) is None


def test_an_answer_with_a_lone_surrogate_streams_and_stores_as_a_replacement_character() -> None:
    """Model output is hostile input too: a tool's result and an answer holding a lone
    surrogate reach the client (and the thread) with U+FFFD in its place; before, the event
    could not be encoded and the stream ended in RUN_ERROR internal_error."""

    def echo(text: str) -> str:
        """Say `text` back."""
        return text

    model = ScriptedModel([call("echo", text="x\udc00y"), "bad \ud800 text"])
    agent = Agent("echo", model=model, tools=[echo], output_key="said")
    asgi = app(Network("echo", agents=[agent]))
    with serve(asgi) as url, httpx.Client(base_url=url, timeout=30) as client:
        events = []
        for run in ("r1", "r2"):
            response = client.post("/", json=run_body("t-1", run, "hi"))
            assert response.status_code == 200
            events += parse_sse(response.content.decode("utf-8"))
    kinds = [event["type"] for event in events]
    assert kinds.count("RUN_FINISHED") == 2 and "RUN_ERROR" not in kinds
    (result,) = [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert result == "x\ufffdy"
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "bad \ufffd text"
    (delta,) = [e["delta"] for e in events if e["type"] == "STATE_DELTA"]
    assert delta == [{"op": "add", "path": "/said", "value": "bad \ufffd text"}]


def test_a_tool_result_read_with_a_replacement_character_comes_back_as_the_same_result() -> None:
    """The client sends back the result it read (U+FFFD where the tool's text had a lone
    surrogate, a file name read with `surrogateescape`, say); before, the server compared it
    with the tool's own text, refused it as `tool_result_changed`, and so every later turn of
    the conversation."""

    def listdir() -> str:
        """The files."""
        return "report\udcff.txt"

    def script(request: Any) -> Any:
        return "ok" if request.history[-1].role == "tool" else call("listdir")

    agent = Agent("files", model=ScriptedModel(script), tools=[listdir])
    asgi = app(Network("files", agents=[agent]))
    with serve(asgi) as url, httpx.Client(base_url=url, timeout=30) as client:
        first = parse_sse(client.post("/", json=run_body("t-1", "r1", "ls")).text)
        (start,) = [e for e in first if e["type"] == "TOOL_CALL_START"]
        (result,) = [e for e in first if e["type"] == "TOOL_CALL_RESULT"]
        assert result["content"] == "report\ufffd.txt"
        tool_call = {"id": start["toolCallId"], "type": "function"}
        tool_call["function"] = {"name": "listdir", "arguments": "{}"}
        messages = [
            {"id": "r1-user", "role": "user", "content": "ls"},
            {"id": start["parentMessageId"], "role": "assistant", "toolCalls": [tool_call]},
            {"id": result["messageId"], "role": "tool", "toolCallId": start["toolCallId"]},
            {"id": "u2", "role": "user", "content": "and now?"},
        ]
        messages[2]["content"] = result["content"]
        again = client.post("/", json={"threadId": "t-1", "runId": "r2", "messages": messages})
        assert again.status_code == 200, again.text
