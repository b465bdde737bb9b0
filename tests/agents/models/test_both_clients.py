"""The native client and the litellm client, side by side on the same fake server.

The same conversation must produce the same request on both; the same server misbehaviour
must produce the same clear `ModelError` on both; a server refusing `tool_choice="required"`
must not break the routing agent on either.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from typing import Any

import pytest

from agents import Agent, ModelRequest, ToolCallDelta, make_model, tool
from agents.models import litellm_model, openai_native
from agents.models.litellm_model import LiteLLMModel
from agents.models.openai_native import OpenAIModel
from network import (
    AssistantMessage,
    ConfigurationError,
    ModelError,
    Network,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from routers import routing_agent
from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall, Reply

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs"), pytest.mark.litellm]


@tool
def lookup(city: str, units: str = "metric") -> str:
    """Look up the weather in a city."""
    return f"sunny in {city}"


def native(base_url: str, **options: Any) -> Any:
    options = {"api_key": "sk-test", "max_retries": 0, **options}
    return OpenAIModel("openai/fake", api_base=base_url, **options)


def through_litellm(base_url: str, **options: Any) -> Any:
    options = {"api_key": "sk-test", "max_retries": 0, **options}
    return LiteLLMModel("openai/fake", api_base=base_url, **options)


CLIENTS = [native, through_litellm]


@pytest.fixture(params=CLIENTS, ids=["native", "litellm"])
def client(request: pytest.FixtureRequest) -> Callable[..., Any]:
    return request.param  # type: ignore[no-any-return]


def conversation() -> ModelRequest:
    """System, user, an assistant turn with two tool calls and no text, their results, text."""
    calls = [
        ToolCall("call_1", "lookup", {"city": "Oslo"}),
        ToolCall("call_2", "lookup", {"city": "Lima", "units": "imperial"}),
    ]
    return ModelRequest(
        [SystemMessage("You report the weather.")],
        [
            UserMessage("Weather in Oslo and Lima?", name="ann"),
            AssistantMessage(None, calls),
            ToolMessage("call_1", "sunny in Oslo"),
            ToolMessage("call_2", "rain in Lima"),
            AssistantMessage("Oslo is sunny; Lima has rain. Anything else?"),
            UserMessage("And in Quito, in imperial units?"),
        ],
        [lookup.schema],
        "lookup",
        "weather",
        {"temperature": 0.1, "max_tokens": 64},
    )


async def ignore(chunk: Any) -> None:
    pass


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
async def test_the_same_conversation_sends_the_same_json(
    openai_server: FakeOpenAIServer, streamed: bool
) -> None:
    request = conversation()
    for make in CLIENTS:
        openai_server.add_tool_calls(FakeToolCall("lookup", {"city": "Quito"}, id="call_3"))
        response = await make(openai_server.base_url).complete(
            request, ignore if streamed else None
        )
        assert response.message.tool_calls == [ToolCall("call_3", "lookup", {"city": "Quito"})]

    ours, litellm = openai_server.requests
    assert sorted(ours) == sorted(litellm)
    for field in ours:  # field by field, so a failure names the field
        assert ours[field] == litellm[field], field
    assert ours["messages"][2] == {
        "role": "assistant",
        "content": "",  # llama.cpp refuses a tool-call message without content
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"city": "Oslo"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {
                    "name": "lookup",
                    "arguments": '{"city": "Lima", "units": "imperial"}',
                },
            },
        ],
    }
    assert ours["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}
    assert (ours.get("stream"), ours.get("stream_options")) == (
        (True, {"include_usage": True}) if streamed else (None, None)
    )
    ours_auth, litellm_auth = (h["authorization"] for h in openai_server.request_headers)
    assert ours_auth == litellm_auth == "Bearer sk-test"


async def test_streamed_pieces_and_usage_reach_both_alike(openai_server: FakeOpenAIServer) -> None:
    usage = {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39}
    pieces = ['{"ci', 'ty": "Qu', 'ito"}']
    seen: dict[str, list[Any]] = {}
    for make in CLIENTS:
        openai_server.add_tool_calls(
            FakeToolCall("lookup", {"city": "Quito"}, id="call_9", chunks=pieces),
            text="Checking.",
            usage=usage,
        )
        chunks: list[Any] = []

        async def on_chunk(chunk: Any, chunks: list[Any] = chunks) -> None:
            chunks.append(chunk)

        response = await make(openai_server.base_url).complete(conversation(), on_chunk)
        seen[make.__name__] = chunks
        assert response.message.tool_calls == [ToolCall("call_9", "lookup", {"city": "Quito"})]
        assert response.usage.to_dict() == {
            **usage,
            "estimated": False,
            "cached_tokens": 0,
            "reasoning_tokens": 0,
        }
    assert seen["native"] == seen["through_litellm"]
    assert [c.arguments for c in seen["native"] if isinstance(c, ToolCallDelta)][1:] == pieces


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_an_id_the_server_repeats_in_one_answer_is_made_unique_on_both(
    openai_server: FakeOpenAIServer, client: Any, streamed: bool
) -> None:
    # Two calls sharing an id would answer as one: the provider matches tool messages by it,
    # and the AG-UI client refuses a second TOOL_CALL_START with an id it has seen.
    openai_server.add_tool_calls(
        FakeToolCall("lookup", {"city": "Quito"}, id="call_1"),
        FakeToolCall("lookup", {"city": "Lima"}, id="call_1"),
        FakeToolCall("lookup", {"city": "Oslo"}, id="call_2"),
    )
    chunks: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        chunks.append(chunk)

    model = client(openai_server.base_url)
    response = await model.complete(conversation(), on_chunk if streamed else None)
    first, second, third = response.message.tool_calls
    assert first == ToolCall("call_1", "lookup", {"city": "Quito"})
    assert second.id not in ("call_1", "call_2") and second.arguments == {"city": "Lima"}
    assert third == ToolCall("call_2", "lookup", {"city": "Oslo"})
    if streamed:  # the ids the stream announced are the answer's
        announced = [c.id for c in chunks if isinstance(c, ToolCallDelta) and c.id]
        assert announced == [first.id, second.id, third.id]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (Reply(text="Cut short", cut_after=3), "connection failed|neither text|without a finish"),
        (Reply(text="Broken", error_after=2), "crashed mid-stream|neither text|without a finish"),
        (Reply(text="Unfinished", finish=False), "without a finish reason"),
        (Reply(text=""), "neither text nor a tool call"),
    ],
    ids=["cut", "error-event", "no-finish-reason", "empty"],
)
async def test_a_broken_stream_is_a_model_error_on_both(
    openai_server: FakeOpenAIServer, client: Any, reply: Reply, problem: str
) -> None:
    openai_server.add(reply)
    with pytest.raises(ModelError, match=problem) as caught:
        await client(openai_server.base_url).complete(conversation(), ignore)
    assert "127.0.0.1" in str(caught.value)


async def test_an_empty_answer_is_a_model_error_on_both(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    openai_server.add_text("")
    with pytest.raises(ModelError, match="neither text nor a tool call"):
        await client(openai_server.base_url).complete(conversation())


@pytest.mark.parametrize(
    "reply",
    [
        Reply(text="x" * 6_000, chunk_size=100),
        Reply(text="é" * 3_000, chunk_size=50),  # 6,000 bytes in UTF-8
        Reply(tool_calls=[FakeToolCall("lookup", {"city": "x" * 6_000})]),
        # 1,000 chunks: their frames count too (letters that vary: litellm refuses a stream
        # that repeats one chunk 100 times, which would hide the bound)
        Reply(text="abcdefghij" * 100, chunk_size=1),
        Reply(text="x" * 6_000, chunk_size=100, unsized=True),  # whole: no Content-Length
    ],
    ids=["text", "utf8", "tool-arguments", "tiny-chunks", "unsized"],
)
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_an_answer_past_its_byte_bound_is_a_model_error_on_both(
    openai_server: FakeOpenAIServer,
    client: Any,
    monkeypatch: pytest.MonkeyPatch,
    reply: Reply,
    stream: bool,
) -> None:
    # litellm read whatever a server went on sending into memory and gave it to the caller
    monkeypatch.setattr(openai_native, "MAX_ANSWER_BYTES", 4_000)
    monkeypatch.setattr(litellm_model, "MAX_ANSWER_BYTES", 4_000)
    openai_server.add(reply)
    model = client(openai_server.base_url, max_retries=2, stream=stream)
    if reply.chunk_size == 1 and not stream:
        assert (await model.complete(conversation())).message.content == reply.text  # 1 KB
        return
    with pytest.raises(ModelError, match="answer too large: the server sent more than 4,000"):
        await model.complete(conversation())
    assert len(openai_server.requests) == 1  # not retried: the same server would send it again
    openai_server.add_text("short")
    assert (await model.complete(conversation())).message.content == "short"


async def test_missing_usage_is_estimated_on_both(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    openai_server.add(Reply(text="No usage.", send_usage=False))
    openai_server.add(Reply(text="Still none.", send_usage=False))
    openai_server.add(Reply(text="Usage this time."))
    model = client(openai_server.base_url)
    streamed = await model.complete(conversation(), ignore)
    plain = await model.complete(conversation())
    reported = await model.complete(conversation(), ignore)
    assert streamed.usage.estimated and plain.usage.estimated
    assert streamed.usage.total_tokens > 0 and plain.usage.total_tokens > 0
    assert not reported.usage.estimated


async def test_connection_refused_is_said_on_both(client: Any) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ModelError, match="connection refused") as caught:
        await client(f"http://127.0.0.1:{port}/v1").complete(conversation())
    assert caught.value.status_code is None  # no HTTP status: there was no answer
    assert f"127.0.0.1:{port}" in str(caught.value)


async def test_http_errors_carry_the_server_message_on_both(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    openai_server.add_error(401, "invalid api key")
    with pytest.raises(ModelError, match="authentication failed.*invalid api key") as caught:
        await client(openai_server.base_url, max_retries=2).complete(conversation())
    assert caught.value.status_code == 401
    assert len(openai_server.requests) == 1  # never retried


async def test_a_server_given_by_api_base_runs_without_a_key_on_both(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/models.md: "A server given by api_base may run without a key". Through litellm
    the openai SDK refused to send without one: `LiteLLMModel("openai/smollm2",
    api_base=<llama.cpp>)` failed with "missing credentials" before anything was sent."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for model in (
        OpenAIModel("openai/fake", api_base=openai_server.base_url, max_retries=0),
        LiteLLMModel("openai/fake", api_base=openai_server.base_url, max_retries=0),
    ):
        openai_server.add_text("Served without a key.")
        answer = await model.complete(ModelRequest([], [UserMessage("Hi")]))
        assert answer.message.content == "Served without a key."
    assert len(openai_server.requests) == 2


async def test_a_server_wanting_the_key_that_was_not_given_says_so_through_litellm(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    openai_server.add_error(401, "invalid api key")
    model = LiteLLMModel("openai/fake", api_base=openai_server.base_url, max_retries=2)
    with pytest.raises(ModelError, match="invalid api key .*no api_key was given.*OPENAI_API_KEY"):
        await model.complete(ModelRequest([], [UserMessage("Hi")]))
    assert len(openai_server.requests) == 1  # never retried


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_a_parameter_cannot_change_the_model_its_tools_or_streaming_on_both(
    openai_server: FakeOpenAIServer, client: Any, streamed: bool
) -> None:
    """The native client's body keeps them; through litellm `Agent(params={"stream": True})`
    (or `--param stream=true`) failed every call ("request failed: AttributeError:
    'CustomStreamWrapper' object has no attribute 'choices'") and a `model` param sent
    another model."""
    openai_server.add_text("Answered whole or streamed, as the caller asked.")
    params = {"stream": not streamed, "model": "other", "tools": [lookup.schema], "seed": 3}
    request = ModelRequest([], [UserMessage("Hi")], params=params)
    answer = await client(openai_server.base_url).complete(request, ignore if streamed else None)
    assert answer.message.content == "Answered whole or streamed, as the caller asked."
    (sent,) = openai_server.requests
    assert sent["model"] == "fake"
    assert "tools" not in sent
    assert bool(sent.get("stream")) is streamed
    assert sent["seed"] == 3  # other parameters are sent as given


async def test_missing_credentials_are_not_retried_on_both(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_BASE", openai_server.base_url)
    for model in (
        OpenAIModel("openai/fake", max_retries=3),
        LiteLLMModel("openai/fake", max_retries=3, retry_delay=30),
    ):
        with pytest.raises(ModelError, match="missing credentials"):
            await model.complete(conversation())
    assert openai_server.requests == []


async def test_the_deadline_covers_the_stream_on_both(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    openai_server.add_text("Slow.", hold_after=1, hold_timeout=30, pings=True)
    with pytest.raises(ModelError, match="timed out"):
        await client(openai_server.base_url, timeout=0.5).complete(conversation(), ignore)


async def test_the_routing_agent_survives_a_server_refusing_required(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    openai_server.add_error(500, "tool_choice 'required' is not supported by this server")
    openai_server.add_text("I think the writer should go.")  # a text reply to a relaxed request
    openai_server.add_tool_calls(("select_agent", {"name": "writer", "reason": "it writes"}))
    openai_server.add_text("Done writing.")  # the writer
    openai_server.add_tool_calls(("done", {"summary": "written"}))  # asked with auto now
    model = client(openai_server.base_url)
    writer = Agent("writer", description="Writes.", model=model)

    result = await Network("team", agents=[writer], router=routing_agent(model)).run("Write.")

    assert result.stop_reason == "router_done" and result.output == "Done writing."
    refused, relaxed, corrected, _, later = openai_server.requests
    assert refused["tool_choice"] == "required"
    assert relaxed["tool_choice"] == corrected["tool_choice"] == later["tool_choice"] == "auto"
    asks = [m["content"] for m in corrected["messages"] if m["role"] == "user"]
    assert "Answer by calling `select_agent` or `done`, not with text." in asks


async def test_a_crashing_server_is_not_a_refusal_of_a_forced_tool_choice(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    # A 500 that says nothing of tool_choice is a crash: retried as it was, never relaxed.
    openai_server.add_error(500, "CUDA error: out of memory")
    openai_server.add_tool_calls(("lookup", {"city": "Oslo"}))
    openai_server.add_error(400, "messages: too long")  # a 400 about something else
    openai_server.add_tool_calls(("lookup", {"city": "Lima"}))
    model = client(openai_server.base_url, max_retries=1, retry_delay=0)

    first = await model.complete(conversation())
    with pytest.raises(ModelError, match="HTTP 400"):
        await model.complete(conversation())
    later = await model.complete(conversation())

    assert not first.tool_choice_relaxed and not later.tool_choice_relaxed
    assert first.message.tool_calls[0].arguments == {"city": "Oslo"}
    sent = [request["tool_choice"] for request in openai_server.requests]
    forced = {"type": "function", "function": {"name": "lookup"}}
    assert sent == [forced] * 4  # the crash, its retry, the 400, the later request
    assert all(
        m["role"] != "user" or "Answer by" not in m["content"]
        for r in openai_server.requests
        for m in r["messages"]
    )


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (500, "1 validation error: body -> tool_choice: unexpected value 'required'"),
        (400, "Named tool choice is not supported by this model"),
        (422, "toolChoice: required is not allowed"),
    ],
)
async def test_a_refusal_that_names_tool_choice_is_relaxed(
    openai_server: FakeOpenAIServer, client: Any, status: int, said: str
) -> None:
    openai_server.add_error(status, said)
    openai_server.add_tool_calls(("lookup", {"city": "Oslo"}))
    model = client(openai_server.base_url)

    response = await model.complete(conversation())

    assert response.tool_choice_relaxed
    refused, relaxed = openai_server.requests
    assert refused["tool_choice"] != "auto" and relaxed["tool_choice"] == "auto"


async def test_a_runs_usage_totals_say_when_they_hold_an_estimate(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    openai_server.add(Reply(text="Counted by the server."))
    openai_server.add(Reply(text="Not counted.", send_usage=False))
    agent = Agent("a", model=client(openai_server.base_url))
    network = Network(
        "n", agents=[agent], router=lambda ctx: None if ctx.call_count >= 1 else agent
    )
    counted = await network.run("One.")
    guessed = await network.run("Two.")
    assert not counted.usage.estimated and counted.usage.total_tokens > 0
    assert guessed.usage.estimated and guessed.usage.total_tokens > 0


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("stream", "false", "stream must be True, False or None"),
        ("api_base", 8000, "api_base must be a URL string, got int"),
        ("api_base", "", "api_base must be an http:// or https:// URL with a host"),
        ("api_base", "127.0.0.1:8000/v1", "api_base must be an http:// or https:// URL"),
        ("api_base", "ftp://127.0.0.1/v1", "api_base must be an http:// or https:// URL"),
        ("api_base", "http://127.0.0.1 /v1", "api_base must be a URL without spaces"),
        ("api_key", "sk-secret\nX-Admin: 1", "api_key holds a line break"),
        ("api_key", 12345, "api_key must be a string, got int"),
        ("api_key", "\u201csk-secret\u201d", "api_key holds a character past ASCII"),
        ("api_key", "sk-secret\ud800", "api_key holds a character past ASCII"),
        ("stop", ["END", "\ud800"], "parameter 'stop'[1] holds a lone surrogate"),
        ("extra_body", {"k": {"\udc80": 1}}, "parameter 'extra_body'['k']['\\udc80'] holds"),
    ],
)
@pytest.mark.parametrize("make", [OpenAIModel, LiteLLMModel], ids=["native", "litellm"])
def test_where_and_how_a_client_sends_is_checked_when_it_is_made(
    make: Any, option: str, value: Any, said: str
) -> None:
    """`stream="false"` streamed (its truth decided), `api_base=""` sent to the provider's
    public endpoint, a number failed with AttributeError inside the client, a base without
    a scheme or a key with a line break failed only at the first call. A key pasted with
    typographic quotes, and a parameter holding a lone surrogate, failed every call (through
    litellm as a made-up "HTTP 500", retried)."""
    options = {"api_base": "http://127.0.0.1:8000/v1", "api_key": "sk-test", option: value}
    with pytest.raises(ConfigurationError, match=f"model 'openai/fake': {re.escape(said)}") as e:
        make("openai/fake", **options)
    assert "sk-secret" not in str(e.value)  # a key is never shown


@pytest.mark.parametrize(
    ("name", "said"),
    [
        (None, "a model client takes a model name"),
        ("", "a model client takes a model name"),
        ("openai/", "no model name after 'openai/'"),
        ("openai/ ", "no model name after 'openai/'"),
        ("openai/gpt\ud800", "holds a control character or a lone surrogate"),
        ("openai/gpt\n4o", "holds a control character or a lone surrogate"),
    ],
)
@pytest.mark.parametrize("make", [OpenAIModel, LiteLLMModel], ids=["native", "litellm"])
def test_a_client_made_directly_checks_its_model_name(make: Any, name: Any, said: str) -> None:
    """`OpenAIModel(None)` was an AttributeError, `LiteLLMModel(None)` and `""` were taken;
    `"openai/"` sent a blank name; a lone surrogate failed every call (UnicodeEncodeError)."""
    with pytest.raises(ConfigurationError, match=re.escape(said)):
        make(name, api_base="http://127.0.0.1:8000/v1", api_key="sk-test")


@pytest.mark.parametrize("model", [None, 5, "", "  "])
def test_make_model_names_a_model_or_says_so(model: Any) -> None:
    with pytest.raises(ConfigurationError, match="make_model takes a model name"):
        make_model(model)


def test_a_model_mapping_with_a_key_that_is_no_option_name_says_so() -> None:
    """Its options were sorted for the cache key first: `TypeError: '<' not supported
    between instances of 'int' and 'str'`, naming no option."""
    from agents.models.registry import resolve_model

    with pytest.raises(ConfigurationError, match="keys are make_model's option names .* got 1"):
        resolve_model({"model": "openai/fake", "api_base": "http://127.0.0.1:1/v1", 1: "x"})
