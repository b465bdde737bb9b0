"""`LiteLLMModel` end to end: the real litellm path to a local fake OpenAI-compatible server.

No mocks: every test sends HTTP to `tests.fakes.openai_server` on 127.0.0.1 and asserts on
what came back and on the JSON the server received.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from agents import Agent, ModelRequest, TextDelta, ToolCallDelta, tool
from agents.models._wire import to_wire
from agents.models.litellm_model import LiteLLMModel, _retry_after
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
from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.litellm]

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
REPORTED = {**USAGE, "estimated": False, "cached_tokens": 0, "reasoning_tokens": 0}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def make_model(server: FakeOpenAIServer, **options: Any) -> LiteLLMModel:
    options.setdefault("max_retries", 0)
    return LiteLLMModel("openai/fake", api_base=server.base_url, api_key="test-key", **options)


def ask(text: str, *, tools: list[dict[str, Any]] | None = None, **kw: Any) -> ModelRequest:
    return ModelRequest(
        system=[SystemMessage(content="Be brief.")],
        history=[UserMessage(content=text)],
        tools=tools or [],
        **kw,
    )


def test_importing_the_packages_does_not_import_litellm() -> None:
    code = (
        "import sys, network, agents, routers, agents.models.litellm_model, agents.models._wire\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'openai')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_plain_text_answer(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_text("Hello there.", usage=USAGE)
    model = make_model(openai_server, temperature=0.2)

    response = await model.complete(ask("Hi", params={"max_tokens": 50}))

    assert model.name == "openai/fake"
    assert response.message.content == "Hello there."
    assert response.message.tool_calls == []
    assert response.finish_reason == "stop"
    assert response.usage.to_dict() == REPORTED
    assert response.raw.choices[0].message.content == "Hello there."
    sent = openai_server.requests[0]
    assert sent["model"] == "fake"
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert sent["temperature"] == 0.2 and sent["max_tokens"] == 50
    assert "tools" not in sent and "tool_choice" not in sent and not sent.get("stream")
    assert openai_server.request_headers[0]["authorization"] == "Bearer test-key"


async def test_tool_calls_are_sent_and_parsed(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_tool_calls(
        FakeToolCall("add", {"a": 2, "b": 3}, id="call_add"), FakeToolCall("add", "{not json")
    )
    openai_server.add_tool_calls(("add", {"a": 1, "b": 1}))
    model = make_model(openai_server)

    response = await model.complete(ask("2+3?", tools=[add.schema], tool_choice="auto"))
    forced = await model.complete(ask("1+1?", tools=[add.schema], tool_choice="add"))

    first, second = response.message.tool_calls
    assert first == ToolCall(id="call_add", name="add", arguments={"a": 2, "b": 3})
    assert second.name == "add" and second.id
    assert second.arguments == "{not json"  # invalid JSON is kept as the model sent it
    assert response.finish_reason == "tool_calls"
    assert forced.message.tool_calls[0].arguments == {"a": 1, "b": 1}
    auto, by_name = openai_server.requests
    assert auto["tools"] == [add.schema]
    assert auto["tool_choice"] == "auto"
    assert by_name["tool_choice"] == {"type": "function", "function": {"name": "add"}}


async def test_agent_in_a_network_sends_tool_results_back(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_tool_calls(FakeToolCall("add", {"a": 2, "b": 3}, id="call_1"))
    openai_server.add_text("2 + 3 = 5.")
    agent = Agent("math", system="You add numbers.", tools=[add], model=make_model(openai_server))

    def router(ctx: Any) -> Any:
        last = ctx.last_result
        return agent if last is None or last.tool_calls else None

    result = await Network("calc", agents=[agent], router=router).run("What is 2 + 3?")

    assert result.output == "2 + 3 = 5."
    assert result.results[0].tool_calls[0].result == 5
    assert result.results[1].usage.total_tokens > 0
    saved = json.loads(result.results[1].to_json())  # the raw response serializes
    assert saved["raw"]["choices"][0]["message"]["content"] == "2 + 3 = 5."
    first, second = openai_server.requests
    assert first["tools"] == [add.schema] and second["tools"] == [add.schema]
    assert second["messages"] == [
        {"role": "system", "content": "You add numbers."},
        {"role": "user", "content": "What is 2 + 3?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "5"},
    ]


async def test_streamed_text_arrives_in_order_as_it_is_sent(
    openai_server: FakeOpenAIServer,
) -> None:
    pieces = ["Stream", "ing ", "works", "."]
    # The server stops after two chunks (role + "Stream") until release() is called: only a
    # client that hands each delta over as it arrives can call it from its chunk handler.
    openai_server.add_text("".join(pieces), chunks=pieces, usage=USAGE, hold_after=2)
    model = make_model(openai_server)
    seen: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        seen.append(chunk)
        openai_server.release()

    response = await model.complete(ask("Stream please"), on_chunk)

    assert seen == [TextDelta(p) for p in pieces]
    assert response.message.content == "Streaming works."
    assert openai_server.held == [True]
    assert response.usage.to_dict() == REPORTED
    assert response.finish_reason == "stop"
    assert response.raw["choices"][0]["message"]["content"] == "Streaming works."
    sent = openai_server.requests[0]
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}


async def test_streamed_tool_call_arguments(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_tool_calls(
        FakeToolCall("add", {"a": 20, "b": 22}, id="call_x", chunks=['{"a": ', "20, ", '"b": 22}']),
        FakeToolCall("add", {"a": 1, "b": 2}),
        text="Adding.",
    )
    model = make_model(openai_server)
    seen: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        seen.append(chunk)

    response = await model.complete(ask("Add", tools=[add.schema]), on_chunk)

    first, second = response.message.tool_calls
    assert response.message.content == "Adding."
    assert first == ToolCall(id="call_x", name="add", arguments={"a": 20, "b": 22})
    assert second.arguments == {"a": 1, "b": 2}
    tool_deltas = [c for c in seen if isinstance(c, ToolCallDelta)]
    assert tool_deltas[:4] == [
        ToolCallDelta(index=0, id="call_x", name="add"),
        ToolCallDelta(index=0, arguments='{"a": '),
        ToolCallDelta(index=0, arguments="20, "),
        ToolCallDelta(index=0, arguments='"b": 22}'),
    ]
    heads = [c for c in tool_deltas if c.id is not None]
    assert [(h.index, h.id, h.name) for h in heads] == [(0, "call_x", "add"), (1, second.id, "add")]
    assert "".join(c.arguments for c in tool_deltas if c.index == 1) == '{"a": 1, "b": 2}'
    assert response.finish_reason == "tool_calls"


async def test_stream_option_without_a_chunk_handler(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_text("All at once.", usage=USAGE)
    response = await make_model(openai_server, stream=True).complete(ask("Hi"))
    assert response.message.content == "All at once."
    assert response.usage.total_tokens == 18
    assert openai_server.requests[0]["stream"] is True


async def test_a_500_is_retried(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_error(500).add_text("Recovered.")
    response = await make_model(openai_server, max_retries=2).complete(ask("Hi"))
    assert response.message.content == "Recovered."
    assert len(openai_server.requests) == 2


async def test_a_persistent_500_becomes_model_error(openai_server: FakeOpenAIServer) -> None:
    for _ in range(3):
        openai_server.add_error(500, "the server melted")
    with pytest.raises(ModelError) as caught:
        await make_model(openai_server, max_retries=2).complete(ask("Hi"))
    error = caught.value
    assert error.status_code == 500 and error.model == "openai/fake"
    assert "openai/fake" in str(error) and "500" in str(error)
    assert getattr(error.__cause__, "status_code", None) == 500
    assert "the server melted" in str(error.__cause__)
    assert len(openai_server.requests) == 3


async def test_a_429_becomes_model_error(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_error(429, "slow down")
    with pytest.raises(ModelError) as caught:
        await make_model(openai_server).complete(ask("Hi"))
    assert caught.value.status_code == 429
    assert type(caught.value.__cause__).__name__ == "RateLimitError"
    assert len(openai_server.requests) == 1


async def test_a_429_then_success_is_retried_while_streaming(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_error(429).add_text("Streamed after a retry.")
    seen: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        seen.append(chunk)

    response = await make_model(openai_server, max_retries=1).complete(ask("Hi"), on_chunk)
    assert "".join(c.text for c in seen) == response.message.content == "Streamed after a retry."


@pytest.mark.parametrize("route", ["openai/fake", "hosted_vllm/fake"])
async def test_the_providers_retry_after_is_read(
    openai_server: FakeOpenAIServer, route: str
) -> None:
    openai_server.add_error(429, headers={"retry-after-ms": "250"})
    model = LiteLLMModel(route, api_base=openai_server.base_url, api_key="k", max_retries=0)
    with pytest.raises(ModelError) as caught:
        await model.complete(ask("Hi"))
    assert caught.value.status_code == 429
    cause = caught.value.__cause__
    assert cause is not None and _retry_after(cause) == 0.25


async def test_a_timeout_becomes_model_error(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_text("Too late.", delay=3.0)
    with pytest.raises(ModelError) as caught:
        await make_model(openai_server, timeout=0.3).complete(ask("Hi"))
    assert "timed out" in str(caught.value)
    assert caught.value.status_code is None  # no HTTP answer came (docs/models.md)
    assert "Timeout" in type(caught.value.__cause__).__name__


async def test_a_chunk_handler_error_is_not_a_model_error(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_text("Some text.")

    async def on_chunk(chunk: Any) -> None:
        raise KeyError("consumer gone")

    with pytest.raises(KeyError, match="consumer gone"):
        await make_model(openai_server, max_retries=2).complete(ask("Hi"), on_chunk)
    assert len(openai_server.requests) == 1


async def test_each_message_is_converted_once(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_text("One.").add_text("Two.")
    history = [
        UserMessage(content="Hi", name="ann"),
        AssistantMessage(content=None, tool_calls=[ToolCall(id="c1", name="add", arguments={})]),
        ToolMessage(tool_call_id="c1", content="0"),
    ]
    model = make_model(openai_server)
    request = ModelRequest(system=[], history=history)
    await model.complete(request)
    wire = [to_wire(m) for m in history]
    await model.complete(request)

    assert all(to_wire(m) is w for m, w in zip(history, wire, strict=True))
    assert openai_server.requests[0]["messages"] == openai_server.requests[1]["messages"]
    assert wire[0] == {"role": "user", "content": "Hi", "name": "ann"}
    assert history[0] == UserMessage(content="Hi", name="ann")  # equality is untouched


async def test_fast_openai_compatible_route_sends_the_same_request(
    openai_server: FakeOpenAIServer,
) -> None:
    """`hosted_vllm/` is the opt-in fast route: same JSON on the wire, schemas left alone."""
    schema: dict[str, Any] = {
        "type": "function",
        "function": {
            "name": "add",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "additionalProperties": False,
            },
        },
    }
    tools = [schema]
    expected = [ToolCall(id="call_1", name="add", arguments={"a": 1})]
    history = [
        UserMessage(content="Add"),
        AssistantMessage(content="Sure.", tool_calls=[ToolCall(id="c0", name="add", arguments={})]),
        ToolMessage(tool_call_id="c0", content="0"),
    ]
    request = ModelRequest(system=[], history=history, tools=tools, tool_choice="add")

    async def ignore(chunk: Any) -> None:
        pass

    for route in ("openai/fake", "hosted_vllm/fake"):
        model = LiteLLMModel(route, api_base=openai_server.base_url, api_key="k", max_retries=0)
        for on_chunk in (None, ignore):
            openai_server.add_tool_calls(FakeToolCall("add", {"a": 1}, id="call_1"), usage=USAGE)
            response = await model.complete(request, on_chunk)
            assert response.message.tool_calls == expected
            assert response.usage.to_dict() == REPORTED

    plain, streamed, vllm_plain, vllm_streamed = openai_server.requests
    assert vllm_plain["messages"] == plain["messages"]
    assert vllm_streamed == {**streamed, "tools": vllm_streamed["tools"]}
    # The one difference: litellm's vLLM route drops `additionalProperties: false` ...
    assert "additionalProperties" not in vllm_plain["tools"][0]["function"]["parameters"]
    # ... from a copy: the caller's schema is left as it was.
    assert schema["function"]["parameters"]["additionalProperties"] is False


async def test_streamed_tool_call_arguments_arrive_while_the_stream_is_open(
    openai_server: FakeOpenAIServer,
) -> None:
    # Chunks: role, the call's head, '{"a": ' -- then the server waits for release(). Only a
    # client that hands argument pieces over as they arrive can release it from on_chunk.
    openai_server.add_tool_calls(
        FakeToolCall("add", {"a": 20, "b": 22}, id="call_h", chunks=['{"a": ', "20, ", '"b": 22}']),
        hold_after=3,
    )
    model = make_model(openai_server)
    seen: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        seen.append(chunk)
        if isinstance(chunk, ToolCallDelta) and chunk.arguments:
            openai_server.release()

    response = await model.complete(ask("Add", tools=[add.schema]), on_chunk)

    assert openai_server.held == [True]
    assert response.message.tool_calls[0].arguments == {"a": 20, "b": 22}
    assert [c.arguments for c in seen if isinstance(c, ToolCallDelta)][1:] == [
        '{"a": ',
        "20, ",
        '"b": 22}',
    ]


@pytest.mark.parametrize("route", ["hosted_vllm/qwen", "lm_studio/qwen", "litellm_proxy/qwen"])
async def test_a_server_of_ones_own_without_api_base_is_refused_before_anything_is_sent(
    route: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # litellm sent these to api.openai.com (with whatever OpenAI key it found)
    from agents.models.litellm_model import load_litellm

    litellm = await load_litellm()  # as the library loads it (its offline price map)

    for name in ("HOSTED_VLLM_API_BASE", "LM_STUDIO_API_BASE", "LITELLM_PROXY_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    sent: list[Any] = []

    async def record(**kwargs: Any) -> Any:
        sent.append(kwargs)
        raise AssertionError("a request was sent")

    monkeypatch.setattr(litellm, "acompletion", record)
    model = LiteLLMModel(route, api_key="k", max_retries=0)
    for _ in range(2):  # every call, not only the first
        with pytest.raises(ConfigurationError) as caught:
            await model.complete(ask("Hi"))
        message = str(caught.value)
        assert message.startswith(f"model {route!r}: provider {route.split('/')[0]!r} is a server")
        assert "no api_base was given" in message and "api.openai.com" in message
    assert sent == []


async def test_a_server_named_by_its_environment_variable_is_not_refused(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOSTED_VLLM_API_BASE", openai_server.base_url)
    openai_server.add_text("From my own server.")
    model = LiteLLMModel("hosted_vllm/qwen", api_key="k", max_retries=0)
    assert (await model.complete(ask("Hi"))).message.content == "From my own server."


@pytest.mark.parametrize("route", ["groq/llama", "anthropic/claude-x", "cometapi/x", "openai/x"])
async def test_providers_with_an_address_of_their_own_are_not_refused(route: str) -> None:
    # litellm knows where these are (cometapi's only in its chat configuration)
    await LiteLLMModel(route, api_key="k")._prepare()
