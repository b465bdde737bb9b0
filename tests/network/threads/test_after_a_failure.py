"""What the run after a failed one on a thread does, as docs/coming-from-langgraph.md says:
the failed run's completed calls stay on the thread, and `network.run("", thread=...)` starts
routing again (no `invoke(None)` that resumes at the failed step, as LangGraph's
tests/test_pregel.py::test_pending_writes_resume pins there), with the thread's results in
`ctx.state.results` for a router that picks up from them."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ModelRequest, ModelResponse, ScriptedModel
from network import Network, RunContext, ThreadRef
from network.threads import MemoryStore

pytestmark = pytest.mark.anyio


class Flaky:
    """A model that fails until told otherwise."""

    name = "flaky"
    provider = "scripted"

    def __init__(self) -> None:
        self.failing = True
        self.inner = ScriptedModel(["written"])

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
        if self.failing:
            raise ConnectionError("the provider is down")
        return await self.inner.complete(request, on_chunk)


async def test_the_next_run_routes_again_and_can_pick_up_from_the_threads_results() -> None:
    research = ScriptedModel(lambda request: "found")
    researcher = Agent("researcher", model=research)
    flaky = Flaky()
    writer = Agent("writer", model=flaky)
    firsts: list[list[str]] = []

    def route(ctx: RunContext) -> Any:
        if ctx.last_result is None:  # the run's first call: what does the thread hold?
            done = [result.agent for result in ctx.state.results]
            firsts.append(done)
            return writer if done and done[-1] == "researcher" else researcher
        return writer if ctx.last_result.agent == "researcher" else None

    network = Network("notes", agents=[researcher, writer], router=route)
    thread = ThreadRef("note-1", store=MemoryStore())
    with pytest.raises(ConnectionError, match="provider is down"):
        await network.run("Write a note", thread=thread)

    flaky.failing = False
    result = await network.run("", thread=thread)
    assert firsts == [[], ["researcher"]]  # routing started again, the thread's calls in view
    assert result.output == "written"
    assert [r.agent for r in result.results] == ["researcher", "writer"]
    assert len(research.requests) == 1  # picked up after the completed call: not asked again
    assert [m.role for m in result.messages] == ["user", "assistant", "assistant"]
