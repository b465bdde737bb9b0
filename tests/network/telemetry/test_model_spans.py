"""Chat spans of real model clients on an OpenAI-compatible server on 127.0.0.1: the model
name sent on the wire and the provider apart, response model, token usage including cached
tokens, price, one span per attempt (retried or failed for good), and the provider's error."""

from __future__ import annotations

import pytest

from agents import Agent, LiteLLMModel
from network import ModelError, Network
from tests.fakes.openai_server import FakeOpenAIServer
from tests.network.telemetry.otel import Recorder, tree

pytestmark = [pytest.mark.anyio, pytest.mark.litellm]
pytest_plugins = ["tests.fakes.openai_server"]


async def test_a_retried_request_is_two_chat_spans(
    openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    openai_server.add_error(500, "overloaded")
    usage = {
        "prompt_tokens": 40,
        "completion_tokens": 5,
        "total_tokens": 45,
        "prompt_tokens_details": {"cached_tokens": 32},
    }
    openai_server.add_text("Hello.", usage=usage)
    recorder = Recorder()
    model = LiteLLMModel(
        "openai/gpt-4o-mini", api_base=openai_server.base_url, api_key="x", retry_delay=0
    )
    network = Network(
        "greeter", agents=[Agent("greeter", model=model)], telemetry=recorder.telemetry
    )
    result = await network.run("Hi.")

    calls = result.results[0].model_calls
    assert [call.error for call in calls] == ["500", None]
    assert tree(recorder.spans) == [
        (
            "invoke_workflow greeter",
            [
                (
                    "invoke_agent greeter",
                    [("chat gpt-4o-mini", []), ("chat gpt-4o-mini", [])],
                )
            ],
        )
    ]
    failed, answered = recorder.named("chat gpt-4o-mini")
    assert failed.attributes["error.type"] == "500"
    assert failed.status.status_code.name == "ERROR"
    assert "gen_ai.usage.input_tokens" not in failed.attributes
    assert dict(answered.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.agent.name": "greeter",
        "gen_ai.response.model": "gpt-4o-mini",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 40,
        "gen_ai.usage.output_tokens": 5,
        "gen_ai.usage.cache_read.input_tokens": 32,
        "agent_network.usage.cost_usd": calls[1].cost_usd,
    }
    assert calls[1].cost_usd is not None and calls[1].cost_usd > 0
    assert failed.end_time <= answered.start_time
    step = recorder.only("invoke_agent greeter")
    assert step.attributes["gen_ai.provider.name"] == "openai"
    assert step.attributes["gen_ai.usage.cache_read.input_tokens"] == 32
    assert step.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert openai_server.requests[-1]["model"] == "gpt-4o-mini"  # what the span says


async def test_the_native_client_reports_its_provider_and_response_model(
    openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    from agents.models.openai_native import OpenAIModel

    openai_server.add_text("Hello.")
    recorder = Recorder()
    model = OpenAIModel("openai/gpt-4o-mini", api_base=openai_server.base_url, api_key="x")
    network = Network(
        "greeter", agents=[Agent("greeter", model=model)], telemetry=recorder.telemetry
    )
    await network.run("Hi.")
    chat = recorder.only("chat gpt-4o-mini")
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert openai_server.requests[0]["model"] == "gpt-4o-mini"
    assert chat.attributes["gen_ai.response.model"] == "gpt-4o-mini"
    assert "agent_network.usage.cost_usd" not in chat.attributes  # api_base: no price


async def test_a_request_that_fails_for_good_is_a_failed_chat_span_per_attempt(
    openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    openai_server.add_error(500, "overloaded")
    openai_server.add_error(500, "still overloaded")
    recorder = Recorder()
    model = LiteLLMModel(
        "openai/gpt-4o-mini",
        api_base=openai_server.base_url,
        api_key="x",
        retry_delay=0,
        max_retries=1,
    )
    network = Network(
        "greeter", agents=[Agent("greeter", model=model)], telemetry=recorder.telemetry
    )
    with pytest.raises(ModelError):
        await network.run("Hi.")

    assert tree(recorder.spans) == [
        (
            "invoke_workflow greeter",
            [("invoke_agent greeter", [("chat gpt-4o-mini", []), ("chat gpt-4o-mini", [])])],
        )
    ]
    for chat in recorder.named("chat gpt-4o-mini"):
        assert chat.attributes["error.type"] == "500"
        assert chat.attributes["gen_ai.agent.name"] == "greeter"
        assert chat.status.status_code.name == "ERROR"
    (agent,) = recorder.named("invoke_agent greeter")
    assert agent.status.status_code.name == "ERROR"


async def test_each_re_ask_of_a_typed_answer_is_a_chat_span(quiet_logs: None) -> None:
    """A typed answer that failed validation was a request of its own: its own chat span."""
    from pydantic import BaseModel

    from agents import ScriptedModel
    from tests.network.telemetry.otel import Recorder as _Recorder

    class Count(BaseModel):
        n: int

    model = ScriptedModel(['{"n": "many"}', '{"n": 3}'])
    recorder = _Recorder()
    network = Network(
        "n", agents=[Agent("typed", model=model, output_type=Count)], telemetry=recorder.telemetry
    )
    result = await network.run("Count.")
    assert result.results[0].output_value == Count(n=3)
    assert len(model.requests) == len(result.results[0].model_calls) == 2
    assert tree(recorder.spans) == [
        (
            "invoke_workflow n",
            [("invoke_agent typed", [("chat scripted", []), ("chat scripted", [])])],
        )
    ]
    first, second = recorder.named("chat scripted")
    assert first.end_time <= second.start_time
