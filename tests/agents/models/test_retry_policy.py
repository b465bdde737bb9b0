"""Model requests, and a routing agent's through its model, take the same `RetryPolicy` as
tools: its tries and waits, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import ModelRequest, OpenAIModel, RetryPolicy
from network import ConfigurationError, ModelError, Network, UserMessage
from routers import routing_agent
from tests.agents.models.clients import native
from tests.fakes.openai_server import FakeOpenAIServer
from tests.routers.helpers import scripted_agent

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


def ask() -> ModelRequest:
    return ModelRequest(system=[], history=[UserMessage("hi")])


async def test_a_policy_sets_how_many_tries_a_request_gets(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    openai_server.add_error(500, "down").add_error(503, "still down").add_text("up")
    # backoff 30 s: only the server's retry-after-ms (1 ms) keeps this quick
    model = client(openai_server.base_url, retry=RetryPolicy(max_attempts=3, backoff=30))
    with anyio.fail_after(20):
        response = await model.complete(ask())
    assert response.message.content == "up"
    assert len(openai_server.requests) == 3

    openai_server.reset()
    openai_server.add_error(500, "down").add_error(500, "down").add_text("up")
    model = client(openai_server.base_url, retry=RetryPolicy(max_attempts=2, backoff=0.001))
    with pytest.raises(ModelError, match="down"):
        await model.complete(ask())
    assert len(openai_server.requests) == 2


async def test_a_routing_agent_retries_through_its_models_policy(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_error(502, "bad gateway")
    openai_server.add_tool_calls(("select_agent", {"name": "coder", "reason": "code"}))
    openai_server.add_tool_calls(("done", {"summary": "built"}))
    coder = scripted_agent("coder", "the code")
    model = native(openai_server.base_url, retry=RetryPolicy(max_attempts=2, backoff=0.001))
    result = await Network("team", agents=[coder], router=routing_agent(model)).run("build it")
    assert [r.agent for r in result.results] == ["coder"]
    assert len(openai_server.requests) == 3

    openai_server.reset()
    openai_server.add_error(502, "bad gateway").add_text("never asked for")
    once = native(openai_server.base_url, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(ModelError, match="bad gateway"):
        await Network("team", agents=[coder], router=routing_agent(once)).run("build it")
    assert len(openai_server.requests) == 1  # the client's default would have retried


def test_a_model_refuses_what_is_not_a_policy() -> None:
    with pytest.raises(ConfigurationError, match="RetryPolicy"):
        OpenAIModel("openai/fake", retry=3)
