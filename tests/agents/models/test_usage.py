"""A server's usage figures are outside data: counts that are not whole numbers >= 0 are not
taken as the server's (the usage is estimated, and says so), so a hostile or broken server
cannot make a request cost less than nothing and slip a run past `max_cost_usd`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agents import Agent, Price
from agents.models.base import ModelRequest
from network import Network
from network.events import RunFinishedEvent
from network.history.messages import UserMessage
from tests.agents.models.clients import native
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = [pytest.mark.anyio, pytest.mark.litellm]
pytest_plugins = ["tests.fakes.openai_server"]

PRICE = Price(input=1.0, output=1.0)


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -1_000_000, "completion_tokens": 5, "total_tokens": -999_995},
        {"prompt_tokens": 5, "completion_tokens": -1_000_000, "total_tokens": -999_995},
        # no float holds 10**400 (pricing it was an OverflowError that failed the run)
        {"prompt_tokens": 10**400, "completion_tokens": 5},
        # past what a JSON reader holds exactly: RUN_FINISHED could not report it
        {"prompt_tokens": 5, "completion_tokens": 2**53},
    ],
    ids=["negative prompt", "negative completion", "unpriceable prompt", "past 2**53"],
)
async def test_bad_counts_are_estimated_never_negative(
    openai_server: FakeOpenAIServer, client: Callable[..., Any], usage: dict[str, Any]
) -> None:
    openai_server.add_text("Hello.", usage=usage)
    model = client(openai_server.base_url, price=PRICE)
    response = await model.complete(ModelRequest(system=[], history=[UserMessage("Hi.")]))
    assert response.usage.estimated
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert response.cost_usd is not None and response.cost_usd > 0


async def test_a_boolean_count_is_no_count(openai_server: FakeOpenAIServer) -> None:
    # native only: litellm's own usage model turns true into 1 before the client reads it
    openai_server.add_text("Hello.", usage={"prompt_tokens": True, "completion_tokens": 5})
    model = native(openai_server.base_url, price=PRICE)
    response = await model.complete(ModelRequest(system=[], history=[UserMessage("Hi.")]))
    assert response.usage.estimated


async def test_cached_and_reasoning_counts_are_at_most_their_whole(
    openai_server: FakeOpenAIServer,
) -> None:
    # native only: litellm's own usage model drops such details before the client reads them
    openai_server.add_text(
        "Hello.",
        usage={
            "prompt_tokens": 10,
            "completion_tokens": 4,
            "prompt_tokens_details": {"cached_tokens": 11},
            "completion_tokens_details": {"reasoning_tokens": 9},
        },
    )
    model = native(openai_server.base_url, price=PRICE)
    response = await model.complete(ModelRequest(system=[], history=[UserMessage("Hi.")]))
    assert (response.usage.cached_tokens, response.usage.reasoning_tokens) == (10, 4)


async def test_a_streamed_run_with_an_absurd_count_finishes(
    openai_server: FakeOpenAIServer,
) -> None:
    # RUN_FINISHED's usage is checked against 2**53 - 1: a server's 10**30 failed the run there
    openai_server.add_text("Hello.", usage={"prompt_tokens": 10**30, "completion_tokens": 5})
    network = Network("n", agents=[Agent("a", model=native(openai_server.base_url))])
    events = [event async for event in network.stream("Hi.")]
    assert isinstance(events[-1], RunFinishedEvent)
