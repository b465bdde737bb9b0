"""RUN_FINISHED's usage (`network.run.usage_report`) is what AG-UI can carry, whatever a model
of one's own reports: each count from 0 to 2**53 - 1."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent
from network import Network
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


async def test_a_models_absurd_counts_end_the_stream_with_counts_in_range() -> None:
    # 10**30 failed the run at RUN_FINISHED (the event's schema stops at 2**53 - 1)
    network = Network(
        "n", agents=[Agent("a", model=Boasting(Usage(10**30, -5, 0, cached_tokens=10**31)))]
    )
    events = [event async for event in network.stream("hi")]
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    entry = finished.model_dump(by_alias=True, exclude_none=True)["usage"][0]
    assert entry["inputTokens"] == 2**53 - 1 and entry["outputTokens"] == 0
    assert entry["totalTokens"] == 2**53 - 1
