"""Typed output over HTTP: the request an OpenAI-compatible server receives carries the schema."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from agents import Agent
from agents.models.litellm_model import LiteLLMModel
from agents.models.openai_native import OpenAIModel
from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs"), pytest.mark.litellm]


class Ticket(BaseModel):
    title: str
    priority: int


async def test_native_output_sends_response_format_and_re_asks_over_http(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_text('{"title": "Login fails"}')  # missing priority: asked again
    openai_server.add_text('{"title": "Login fails", "priority": 1}')
    model = LiteLLMModel("openai/local", api_base=openai_server.base_url, api_key="x")
    assert await model.structured_output() == "native"  # a self-hosted OpenAI-compatible server
    triage = Agent("triage", system="File a ticket.", model=model, output_type=Ticket)
    result = await triage.run("login is broken")
    first, second = openai_server.requests
    response_format = first["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Ticket"
    assert response_format["json_schema"]["schema"]["required"] == ["title", "priority"]
    assert "tools" not in first
    assert second["response_format"] == response_format
    feedback = second["messages"][-1]
    assert feedback["role"] == "user" and "priority: Field required" in feedback["content"]
    assert len(second["messages"]) == len(first["messages"]) + 1
    assert result.results[-1].output_value == Ticket(title="Login fails", priority=1)


async def test_tool_output_sends_a_forced_final_output_tool(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_tool_calls(("final_output", {"title": "t", "priority": 3}))
    model = LiteLLMModel("openai/local", api_base=openai_server.base_url, api_key="x")
    triage = Agent("triage", model=model, output_type=Ticket, output_mode="tool")
    result = await triage.run("x")
    (request,) = openai_server.requests
    assert request["tool_choice"] == {"type": "function", "function": {"name": "final_output"}}
    assert request["tools"][0]["function"]["parameters"]["required"] == ["title", "priority"]
    assert "response_format" not in request
    assert json.loads(result.output) == {"title": "t", "priority": 3}
    assert result.results[-1].output_value == Ticket(title="t", priority=3)


async def test_auto_mode_follows_what_litellm_knows_of_the_model() -> None:
    assert await LiteLLMModel("openai/gpt-4o-mini").structured_output() == "native"
    unknown = LiteLLMModel("openai/no-such-model-xyz")
    assert await unknown.structured_output() in ("tool", "prompted")


def test_a_model_described_as_data_resolves_through_make_model() -> None:
    from agents.models.registry import resolve_model
    from network import ConfigurationError

    spec = {"model": "openai/local", "api_base": "http://127.0.0.1:1/v1", "temperature": 0}
    model = resolve_model(spec)
    assert isinstance(model, OpenAIModel) and model.api_base == "http://127.0.0.1:1/v1"
    assert resolve_model(dict(spec)) is model  # cached
    forced = resolve_model({**spec, "client": "litellm"})
    assert isinstance(forced, LiteLLMModel) and forced.params == {"temperature": 0}
    with pytest.raises(ConfigurationError, match="needs a 'model' string"):
        resolve_model({"api_base": "x"})


async def test_the_native_client_sends_the_schema_too(openai_server: FakeOpenAIServer) -> None:
    openai_server.add_text('{"title": "t", "priority": 2}')
    model = OpenAIModel("openai/local", api_base=openai_server.base_url)
    triage = Agent("triage", model=model, output_type=Ticket)
    result = await triage.run("x")
    (request,) = openai_server.requests
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["title", "priority"]
    assert result.results[-1].output_value == Ticket(title="t", priority=2)
