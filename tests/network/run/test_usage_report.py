"""RUN_FINISHED's usage (`network.run.usage_report`) is what AG-UI can carry, whatever a model
of one's own reports: each count from 0 to 2**53 - 1."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent
from network import ModelError, Network, UsageLimits
from network.events import RunFinishedEvent
from network.history.messages import AssistantMessage
from network.history.model_io import ModelRequest, ModelResponse
from network.history.results import Usage

pytestmark = pytest.mark.anyio


class Boasting:
    """A model of one's own that reports `usage` with its answer."""

    name = "boasting"

    def __init__(self, usage: Usage) -> None:
        self.usage = usage

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
        return ModelResponse(AssistantMessage("ok"), self.usage, None, "stop")


async def test_counts_summed_past_the_ceiling_end_the_stream_with_counts_in_range() -> None:
    # 10**30 failed the run at RUN_FINISHED (the event's schema stops at 2**53 - 1); each
    # answer's counts are in range now (a model's own past it is a ModelError, below), but
    # the run's sum of two may not be
    largest = 2**53 - 1
    agent = Agent("a", model=Boasting(Usage(largest, 0, largest)))
    network = Network("n", agents=[agent], router=lambda ctx: agent, max_iter=2)
    events = [event async for event in network.stream("hi")]
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    entry = finished.model_dump(by_alias=True, exclude_none=True)["usage"][0]
    assert entry["inputTokens"] == largest and entry["outputTokens"] == 0
    assert entry["totalTokens"] == largest


async def test_a_models_absurd_counts_end_the_stream_with_a_run_error_naming_the_field() -> None:
    network = Network(
        "n", agents=[Agent("a", model=Boasting(Usage(10**30, -5, 0, cached_tokens=10**31)))]
    )
    events: list[Any] = []
    with pytest.raises(ModelError, match="prompt_tokens is 1000000000000000000000000000000"):
        async for event in network.stream("hi"):
            events.append(event)
    assert not any(isinstance(event, RunFinishedEvent) for event in events)


@pytest.mark.parametrize("limits", [None, UsageLimits(max_model_calls=5)], ids=["plain", "limits"])
async def test_cached_tokens_reach_run_finished_and_the_result_whether_requests_are_recorded(
    limits: UsageLimits | None,
) -> None:
    """Before, the run's totals dropped the cached and reasoning counts its calls reported:
    `RunResult.usage.cached_tokens` was 0, and so was RUN_FINISHED's `cachedInputTokens` in a
    run that recorded no requests of its own (no limits, not traced); a run with limits
    reported them. Now both runs report what the calls did."""
    usage = Usage(100, 10, 110, cached_tokens=60, reasoning_tokens=5)
    agent = Agent("a", model=Boasting(usage))
    network = Network("n", agents=[agent], limits=limits)
    events = [event async for event in network.stream("hi")]
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    (entry,) = finished.model_dump(by_alias=True, exclude_none=True)["usage"]
    assert entry["inputTokens"] == 100 and entry["cachedInputTokens"] == 60
    result = await network.run("hi")
    assert result.usage == usage
