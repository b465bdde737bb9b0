"""What the two clients share (`agents.models._retrying`), where they used to differ.

Both now go through one retry loop: a retried request reports each attempt (usage limits and
traces count them), and running out of the deadline is "timed out" with no HTTP status on
both. Tool arguments are read by one function on both.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ModelRequest
from agents.models._tool_arguments import parse_arguments
from network import ModelError, Network, UsageLimits, UserMessage
from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs"), pytest.mark.litellm]


def ask() -> ModelRequest:
    return ModelRequest(system=[], history=[UserMessage("hi")], agent="asker")


async def test_a_retried_request_reports_each_attempt_on_both(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    openai_server.add_error(503, "busy").add_text("Answered.")
    response = await client(openai_server.base_url, max_retries=1).complete(ask())

    failed, answered = response.attempts
    assert failed.error is not None and failed.usage.total_tokens == 0
    assert (answered.error, answered.finish_reason) == (None, "stop")
    assert answered.usage == response.usage
    assert failed.agent == answered.agent == "asker"
    assert failed.model == answered.model == "openai/fake"


async def test_usage_limits_count_every_attempt_on_both(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    openai_server.add_error(500, "overloaded").add_text("Done.")
    agent = Agent("a", model=client(openai_server.base_url, max_retries=1, retry_delay=0))
    network = Network("n", agents=[agent], router=lambda ctx: agent)

    result = await network.run("Go.", limits=UsageLimits(max_model_calls=2))

    assert [call.error is None for call in result.results[0].model_calls] == [False, True]
    assert result.limit_exceeded is not None
    assert result.limit_exceeded.figures.model_calls == 2


async def test_the_deadline_is_retried_and_has_no_http_status_on_both(
    openai_server: FakeOpenAIServer, client: Any
) -> None:
    openai_server.add_text("Late.", delay=5.0).add_text("Late again.", delay=5.0)
    # 1 s an attempt: with 0.3 s, litellm at load 20 ran out of it before sending the request
    model = client(openai_server.base_url, timeout=1.0, max_retries=1, retry_delay=0)
    with pytest.raises(ModelError, match="timed out.*after 2 attempts") as caught:
        await model.complete(ask())
    assert caught.value.status_code is None  # no HTTP answer came
    assert isinstance(caught.value.__cause__, TimeoutError)
    assert len(openai_server.requests) == 2


def test_tool_arguments_that_are_not_an_object_stay_as_they_came() -> None:
    # Kept, so the tool tells the model "arguments must be a JSON object" instead of running
    # without them; before, the native client turned a non-string into {} and litellm kept it.
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments({"a": 1}) == {"a": 1}
    assert parse_arguments(None) == parse_arguments("") == parse_arguments("  ") == {}
    assert parse_arguments("[1, 2]") == "[1, 2]"
    assert parse_arguments("not json") == "not json"
    assert parse_arguments([1, 2]) == [1, 2]
    assert parse_arguments(42) == 42


def test_tool_arguments_nested_past_pythons_stack_stay_as_they_came() -> None:
    # a model's garbage: the tool says "not valid JSON"; before, the answer's parse raised
    # RecursionError out of the model client and the run failed with it
    deep = "[" * 100_000
    assert parse_arguments(deep) == deep
    assert parse_arguments('{"a": ' * 100_000) == '{"a": ' * 100_000
