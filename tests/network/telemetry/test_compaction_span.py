"""A context policy's compaction shows in the trace: an event on the agent's span with what was
dropped, summarised and trimmed (counts by default, the summary's text only with content on)."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ContextPolicy, ScriptedModel
from network import Network, ThreadRef
from network.threads import MemoryStore
from tests.network.telemetry.otel import Recorder, every_value

pytestmark = pytest.mark.anyio

SUMMARY = "they talked about the secret garden"


def summarize(messages: list[Any], previous: str | None) -> str:
    return SUMMARY


async def _compacted_run(recorder: Recorder) -> Any:
    store = MemoryStore()
    policy = ContextPolicy(max_messages=4, summarize=summarize, max_tool_result_chars=50)
    quiet = Network("chat", agents=[Agent("a", model=ScriptedModel(["ok"] * 8))])
    for n in range(4):  # 8 messages on the thread, untraced
        await quiet.run(f"question {n}", thread=ThreadRef("t", store=store))
    agent = Agent("a", model=ScriptedModel(["fine"]))
    traced = Network("chat", agents=[agent], context_policy=policy, telemetry=recorder.telemetry)
    return await traced.run("and now?", thread=ThreadRef("t", store=store))


async def test_a_compacted_request_is_an_event_on_its_agent_span(
    quiet_logs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    recorder = Recorder()
    result = await _compacted_run(recorder)
    assert result.output == "fine"
    agent_span = recorder.only("invoke_agent a")
    (event,) = [e for e in agent_span.events if e.name == "agent_network.context.compacted"]
    attributes = dict(event.attributes or {})
    summary = result.state.summaries[-1]
    assert attributes == {
        "agent_network.context.agent": "a",
        "agent_network.context.messages": 9,
        "agent_network.context.sent": 9 - summary.covers,
        "agent_network.context.dropped": summary.covers,
        "agent_network.context.summarized": True,
        "agent_network.context.summary_covers": summary.covers,
        "agent_network.context.new_summary": True,
        "agent_network.context.summarized_by": "summarize",
        "agent_network.context.trimmed_tool_results": 0,
        "agent_network.context.tokens": 0,
    }
    # Counts only: neither the summary nor the conversation is in the trace by default.
    values = "\n".join(every_value(recorder.spans))
    assert SUMMARY not in values and "question 0" not in values


async def test_with_content_on_the_event_carries_the_summary(quiet_logs: None) -> None:
    recorder = Recorder(capture_content=True)
    await _compacted_run(recorder)
    (event,) = [
        e
        for e in recorder.only("invoke_agent a").events
        if e.name == "agent_network.context.compacted"
    ]
    assert (event.attributes or {})["agent_network.context.summary"] == SUMMARY


async def test_no_event_when_the_request_fits(quiet_logs: None) -> None:
    recorder = Recorder()
    policy = ContextPolicy(max_messages=40, summarize=summarize)
    network = Network(
        "chat",
        agents=[Agent("a", model=ScriptedModel(["fine"]))],
        context_policy=policy,
        telemetry=recorder.telemetry,
    )
    await network.run("hello", thread=ThreadRef("t", store=MemoryStore()))
    assert recorder.only("invoke_agent a").events == ()
