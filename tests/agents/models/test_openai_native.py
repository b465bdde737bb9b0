"""`OpenAIModel`, the native client, end to end against the fake server on 127.0.0.1.

No mocks: every test sends HTTP to `tests.fakes.openai_server` and asserts on what came back
and on the JSON the server received.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from agents import ModelRequest, TextDelta, ToolCallDelta, make_model, tool
from agents.models import openai_native
from agents.models._wire import to_wire_json
from agents.models.litellm_model import LiteLLMModel
from agents.models.openai_native import OpenAIModel
from agents.models.registry import resolve_model
from network import ConfigurationError, ModelError, SystemMessage, ToolCall, UserMessage
from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall, Reply

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = pytest.mark.anyio

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def native(server: FakeOpenAIServer, **options: Any) -> OpenAIModel:
    options.setdefault("max_retries", 0)
    options.setdefault("retry_delay", 0.01)
    return OpenAIModel("openai/fake", api_base=server.base_url, **options)


def ask(text: str = "Hi", *, tools: list[dict[str, Any]] | None = None, **kw: Any) -> ModelRequest:
    return ModelRequest([SystemMessage("Be brief.")], [UserMessage(text)], tools or [], **kw)


async def collect(model: Any, request: ModelRequest) -> tuple[Any, list[Any]]:
    seen: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        seen.append(chunk)

    return await model.complete(request, on_chunk), seen


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- choosing the client -----------------------------------------------------------------


def test_model_strings_choose_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_NETWORK_MODEL_CLIENT", raising=False)
    assert isinstance(make_model("openai/gpt-4o-mini"), OpenAIModel)
    assert isinstance(make_model("hosted_vllm/m", api_base="http://127.0.0.1:1/v1"), OpenAIModel)
    assert isinstance(make_model("anthropic/claude-x"), LiteLLMModel)
    assert isinstance(make_model("openai/gpt-4o-mini", client="litellm"), LiteLLMModel)
    monkeypatch.setenv("AGENT_NETWORK_MODEL_CLIENT", "litellm")
    assert isinstance(make_model("openai/gpt-4o-mini"), LiteLLMModel)
    with pytest.raises(ConfigurationError, match="client 'fast'"):
        make_model("openai/x", client="fast")
    with pytest.raises(ConfigurationError, match="no api_base"):
        OpenAIModel("hosted_vllm/m")
    assert isinstance(resolve_model("openai/resolved-once"), OpenAIModel | LiteLLMModel)
    assert resolve_model("openai/resolved-once") is resolve_model("openai/resolved-once")


def test_the_model_name_sent_is_what_follows_the_provider() -> None:
    assert OpenAIModel("openai/gpt-4o-mini").model_name == "gpt-4o-mini"
    model = OpenAIModel("openrouter/meta/llama-3", api_base="http://127.0.0.1:1/v1")
    assert model.model_name == "meta/llama-3"


# -- answers -------------------------------------------------------------------------------


async def test_plain_text_answer_and_request(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_text("Hello there.", usage=USAGE)
    model = native(openai_server, api_key="sk-test", temperature=0.2)

    response = await model.complete(ask("Hi", params={"max_tokens": 50}))

    assert response.message.content == "Hello there."
    assert response.message.tool_calls == []
    assert response.finish_reason == "stop"
    assert response.usage.to_dict() == {
        **USAGE,
        "estimated": False,
        "cached_tokens": 0,
        "reasoning_tokens": 0,
    }
    assert response.raw["choices"][0]["message"]["content"] == "Hello there."
    sent = openai_server.requests[0]
    assert sent == {
        "model": "fake",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
        "temperature": 0.2,
        "max_tokens": 50,
    }
    assert openai_server.request_headers[0]["authorization"] == "Bearer sk-test"


async def test_a_user_name_providers_refuse_is_sent_made_safe(
    openai_server: FakeOpenAIServer,
) -> None:
    """OpenAI answers 400 to a message `name` with a space or any of `<|\\/>`; an AG-UI
    client's user "Jane Doe" then failed every request of its thread. A name outside
    `[A-Za-z0-9_-]{1,64}` goes made safe, one with nothing left not at all."""
    names = ["Jane Doe", "Zoë", "ada_1", "李"]
    for _ in names:
        openai_server.add_text("ok", usage=USAGE)
    model = native(openai_server, api_key="sk-test")
    for name in names:
        await model.complete(ModelRequest([], [UserMessage("Hi", name=name)], []))
    sent = [request["messages"][0].get("name") for request in openai_server.requests]
    assert sent == ["Jane_Doe", "Zoe", "ada_1", None]


async def test_the_key_comes_from_the_environment(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.add_text("Hi.")
    await OpenAIModel("openai/fake", max_retries=0).complete(ask())
    assert openai_server.request_headers[0]["authorization"] == "Bearer sk-from-env"


async def test_missing_credentials_fail_at_once(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    with pytest.raises(ModelError, match="missing credentials.*OPENAI_API_KEY") as caught:
        await OpenAIModel("openai/fake", max_retries=3).complete(ask())
    assert caught.value.status_code is None
    assert openai_server.requests == []  # nothing sent, nothing retried


async def test_parallel_tool_calls_and_tool_choice(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_tool_calls(
        FakeToolCall("add", {"a": 2, "b": 3}, id="call_add"), FakeToolCall("add", "{not json")
    )
    openai_server.add_tool_calls(("add", {"a": 1, "b": 1}))
    openai_server.add_tool_calls(("add", {"a": 1, "b": 2}))
    model = native(openai_server)

    response = await model.complete(ask("2+3?", tools=[add.schema], tool_choice="auto"))
    await model.complete(ask("1+1?", tools=[add.schema], tool_choice="add"))
    await model.complete(ask("1+2?", tools=[add.schema], tool_choice="required"))

    first, second = response.message.tool_calls
    assert first == ToolCall(id="call_add", name="add", arguments={"a": 2, "b": 3})
    assert second.arguments == "{not json"  # invalid JSON is kept as the model sent it
    assert response.finish_reason == "tool_calls"
    auto, by_name, required = openai_server.requests
    assert auto["tools"] == [add.schema] and auto["tool_choice"] == "auto"
    assert by_name["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert required["tool_choice"] == "required"


async def test_streamed_text_arrives_while_the_stream_is_open(
    openai_server: FakeOpenAIServer,
) -> None:
    pieces = ["Stream", "ing ", "works", "."]
    # The server stops after two chunks until release(): only a client handing each delta
    # over as it arrives can call it from its chunk handler.
    openai_server.add_text("".join(pieces), chunks=pieces, usage=USAGE, hold_after=2, pings=True)
    model = native(openai_server)
    seen: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        seen.append(chunk)
        openai_server.release()

    response = await model.complete(ask(), on_chunk)

    assert seen == [TextDelta(p) for p in pieces]
    assert openai_server.held == [True]
    assert response.message.content == "Streaming works."
    assert response.usage.to_dict() == {
        **USAGE,
        "estimated": False,
        "cached_tokens": 0,
        "reasoning_tokens": 0,
    }
    assert response.raw["choices"][0]["message"]["content"] == "Streaming works."
    sent = openai_server.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}


async def test_streamed_tool_call_arguments_in_pieces(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_tool_calls(
        FakeToolCall("add", {"a": 20, "b": 22}, id="call_x", chunks=['{"a": ', "20, ", '"b": 22}']),
        FakeToolCall("add", {"a": 1, "b": 2}),
        text="Adding.",
    )
    response, seen = await collect(native(openai_server), ask("Add", tools=[add.schema]))

    first, second = response.message.tool_calls
    assert response.message.content == "Adding."
    assert first == ToolCall(id="call_x", name="add", arguments={"a": 20, "b": 22})
    assert second.arguments == {"a": 1, "b": 2}
    deltas = [c for c in seen if isinstance(c, ToolCallDelta)]
    assert deltas[:4] == [
        ToolCallDelta(index=0, id="call_x", name="add"),
        ToolCallDelta(index=0, arguments='{"a": '),
        ToolCallDelta(index=0, arguments="20, "),
        ToolCallDelta(index=0, arguments='"b": 22}'),
    ]
    assert "".join(c.arguments for c in deltas if c.index == 1) == '{"a": 1, "b": 2}'
    assert response.finish_reason == "tool_calls"


async def test_a_stream_without_usage_is_estimated_and_says_so(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add(Reply(text="No usage from me.", send_usage=False))
    openai_server.add(Reply(text="Nor from me.", send_usage=False))
    model = native(openai_server)
    streamed, _ = await collect(model, ask())
    plain = await model.complete(ask())
    for response in (streamed, plain):
        assert response.usage.estimated is True
        assert response.usage.completion_tokens > 0 and response.usage.prompt_tokens > 0


# -- failures ------------------------------------------------------------------------------


async def test_a_500_is_retried_then_succeeds(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_error(500).add_error(503).add_text("Recovered.")
    response = await native(openai_server, max_retries=2).complete(ask())
    assert response.message.content == "Recovered."
    assert len(openai_server.requests) == 3


async def test_a_persistent_500_names_status_message_and_url(
    openai_server: FakeOpenAIServer,
) -> None:
    for _ in range(3):
        openai_server.add_error(500, "the server melted")
    with pytest.raises(ModelError) as caught:
        await native(openai_server, max_retries=2).complete(ask())
    text = str(caught.value)
    assert caught.value.status_code == 500 and caught.value.model == "openai/fake"
    assert "HTTP 500" in text and "the server melted" in text and "after 3 attempts" in text
    assert f"{openai_server.base_url}/chat/completions" in text
    assert len(openai_server.requests) == 3


async def test_retry_after_is_honoured(openai_server: FakeOpenAIServer) -> None:
    # The first delay would be 30 s of backoff; the server's retry-after of 0 s wins.
    openai_server.add_error(429, "slow down", headers={"retry-after-ms": "0"}).add_text("Ok.")
    response = await native(openai_server, max_retries=1, retry_delay=30).complete(ask())
    assert response.message.content == "Ok."


@pytest.mark.parametrize(("status", "kind"), [(401, "authentication failed"), (400, "HTTP 400")])
async def test_auth_and_validation_errors_are_not_retried(
    openai_server: FakeOpenAIServer, status: int, kind: str
) -> None:
    openai_server.add_error(status, "you shall not pass")
    with pytest.raises(ModelError, match=f"{kind}.*you shall not pass") as caught:
        await native(openai_server, max_retries=3, api_key="sk-secret").complete(ask())
    assert caught.value.status_code == status
    assert "sk-secret" not in str(caught.value)
    assert len(openai_server.requests) == 1


async def test_connection_refused_is_said_and_retried() -> None:
    # (a query is refused when the model is made: test_an_api_base_with_a_query_is_refused...)
    url = f"http://user:pw@127.0.0.1:{free_port()}/v1"
    model = OpenAIModel("openai/m", api_base=url, max_retries=1, retry_delay=0.01)
    with pytest.raises(ModelError) as caught:
        await model.complete(ask())
    text = str(caught.value)
    assert "connection refused" in text and "after 2 attempts" in text
    assert "pw" not in text and "127.0.0.1" in text


async def test_the_deadline_covers_the_whole_stream(openai_server: FakeOpenAIServer) -> None:
    # The server keeps the stream open (pinging) far longer than the deadline.
    openai_server.add_text("Slow.", hold_after=1, hold_timeout=30, pings=True)
    with pytest.raises(ModelError, match="timed out"):
        await collect(native(openai_server, timeout=0.5), ask())


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (Reply(text="Cut", cut_after=2), "connection failed"),
        (Reply(text="Broken", error_after=2), "the model crashed mid-stream"),
        (Reply(text="Unfinished", finish=False), "without a finish reason"),
        (Reply(text=""), "neither text nor a tool call"),
    ],
)
async def test_a_broken_stream_is_a_model_error(
    openai_server: FakeOpenAIServer, reply: Reply, problem: str
) -> None:
    openai_server.add(reply)
    with pytest.raises(ModelError, match=problem):
        await collect(native(openai_server), ask())


async def test_an_empty_answer_is_a_model_error(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_text("")
    with pytest.raises(ModelError, match="neither text nor a tool call"):
        await native(openai_server).complete(ask())


async def test_a_chunk_handler_error_passes_through(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_text("Some text.")

    async def on_chunk(chunk: Any) -> None:
        raise KeyError("consumer gone")

    with pytest.raises(KeyError, match="consumer gone"):
        await native(openai_server, max_retries=2).complete(ask(), on_chunk)
    assert len(openai_server.requests) == 1


async def test_a_refused_forced_tool_choice_is_relaxed_once_and_remembered(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_error(500, "tool_choice 'required' is not supported")
    openai_server.add_tool_calls(("add", {"a": 1, "b": 2}))
    openai_server.add_tool_calls(("add", {"a": 2, "b": 2}))
    model = native(openai_server)

    first = await model.complete(ask("1+2", tools=[add.schema], tool_choice="required"))
    second = await model.complete(ask("2+2", tools=[add.schema], tool_choice="add"))

    assert first.tool_choice_relaxed and second.tool_choice_relaxed
    refused, retried, later = openai_server.requests
    assert refused["tool_choice"] == "required"
    assert retried["tool_choice"] == later["tool_choice"] == "auto"
    assert "call" in retried["messages"][-1]["content"]
    assert "`add`" in later["messages"][-1]["content"]
    assert retried["messages"][:-1] == refused["messages"]


# -- the wire ------------------------------------------------------------------------------


async def test_each_message_is_serialized_once(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_text("One.").add_text("Two.")
    history = [UserMessage("Hi")]
    model = native(openai_server)
    await model.complete(ModelRequest([], history))
    text = to_wire_json(history[0])
    await model.complete(ModelRequest([], history))
    assert to_wire_json(history[0]) is text  # the same string object: cached, not rebuilt
    assert openai_server.requests[0] == openai_server.requests[1]
    assert json.loads(text) == {"role": "user", "content": "Hi"}


async def test_one_pooled_connection_serves_plain_and_streamed_calls(
    openai_server: FakeOpenAIServer,
) -> None:
    for _ in range(4):
        openai_server.add_text("Again.")
    model = native(openai_server)
    other_model_same_server = native(openai_server, temperature=0.5)
    await model.complete(ask())
    await collect(model, ask())  # a stream read to its end leaves the connection reusable
    await collect(other_model_same_server, ask())
    await model.complete(ask())
    assert len(set(openai_server.client_ports)) == 1


async def test_a_connection_the_server_closed_while_the_loop_was_busy_is_not_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server closes idle connections after its keep-alive (uvicorn's: 5 s); the client
    drops a pooled connection sooner (`KEEPALIVE_S`), so a loop that was busy past the
    server's keep-alive never sends a request on a connection already closed (an attempt lost
    to `ServerDisconnectedError`). Here at a tenth of the scale: 0.4 s against 0.5 s."""
    import time

    from agents.models import _http_pool

    monkeypatch.setattr(_http_pool, "KEEPALIVE_S", 0.4)
    with FakeOpenAIServer(keep_alive_s=0.5) as server:
        server.add_text("one").add_text("two")
        model = native(server, max_retries=0)
        await model.complete(ask())
        time.sleep(0.8)  # the loop is busy: the server's close is not seen
        answer = await model.complete(ask())
    assert answer.message.content == "two"
    assert not answer.attempts  # no attempt lost
    assert len(set(server.client_ports)) == 2  # a new connection


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_an_answer_past_its_byte_bound_is_a_model_error(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    # a server that went on sending filled the process's memory until the call's timeout
    monkeypatch.setattr(openai_native, "MAX_ANSWER_BYTES", 4_000)
    openai_server.add_text("x" * 6_000, chunk_size=100)
    model = OpenAIModel("openai/fake", api_base=openai_server.base_url, api_key="k", stream=stream)
    with pytest.raises(ModelError, match="answer too large: the server sent more than 4,000 bytes"):
        await model.complete(ModelRequest(system=[], history=[UserMessage("Hi.")]))
    assert len(openai_server.requests) == 1  # not retried: the same server would send it again
    openai_server.add_text("short")
    answer = await model.complete(ModelRequest(system=[], history=[UserMessage("Hi.")]))
    assert answer.message.content == "short"


@pytest.mark.parametrize("value", [object(), {1, 2}, {"nested": [b"bytes"]}])
def test_a_parameter_no_json_body_can_carry_is_refused_when_the_model_is_made(value: Any) -> None:
    """It failed every call instead ("request failed: TypeError: Object of type object is not
    JSON serializable"), after the run had started."""
    with pytest.raises(ConfigurationError, match="parameter 'extra_body' cannot be sent in a JSON"):
        OpenAIModel("openai/fake", api_base="http://127.0.0.1:8000/v1", extra_body=value)


@pytest.mark.parametrize(
    "base", ["http://127.0.0.1:8000/v1?key=secret", "http://127.0.0.1:8000/v1#x", "http://h/v1?"]
)
def test_an_api_base_with_a_query_is_refused_when_the_model_is_made(base: str) -> None:
    """`/chat/completions` was appended to it: with a query, the path joined the query and
    every request went to `/v1` (a 404, or whatever that path answers)."""
    with pytest.raises(ConfigurationError, match="without a query or fragment") as caught:
        OpenAIModel("openai/fake", api_base=base)
    assert "secret" not in str(caught.value)
