"""Context policies: what a request on a long thread sends, and what the thread keeps."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agents import Agent, ContextPolicy, LiteLLMModel, ModelRequest, ScriptedModel
from agents.models._wire import to_wire
from agents.models.litellm_model import tokens_for
from network import ConfigurationError, Network, ThreadRef
from network.history.messages import SystemMessage, ToolMessage
from network.threads import MemoryStore
from tests.fakes.openai_server import FakeOpenAIServer
from tests.network.threads.long_thread import build_thread

pytest_plugins = ["tests.fakes.openai_server"]
pytestmark = [pytest.mark.anyio, pytest.mark.litellm]


async def test_the_fake_server_refuses_an_orphan_tool_message_as_the_api_does(
    openai_server: FakeOpenAIServer,
) -> None:
    orphan = {
        "model": "fake",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ],
    }
    async with httpx.AsyncClient(timeout=30) as client:
        answer = await client.post(f"{openai_server.base_url}/chat/completions", json=orphan)
    assert answer.status_code == 400
    assert "must be a response to a preceding message with 'tool_calls'" in answer.text


async def test_a_long_thread_is_sent_within_the_token_budget_with_tools_paired(
    openai_server: FakeOpenAIServer,
) -> None:
    store = MemoryStore()
    # 400 calls whose tool results are long: the cut falls inside call/result pairs.
    await build_thread(store, "t1", 400, result_text="x" * 300)
    model = LiteLLMModel("openai/gpt-4o-mini", api_base=openai_server.base_url, api_key="k")
    policy = ContextPolicy(max_tokens=1_000)
    agent = Agent("a", system="You answer briefly.", model=model, context_policy=policy)
    openai_server.add_text("fine")
    seen: list[Any] = []

    result = await Network("chat", agents=[agent]).run(
        "and now?", thread=ThreadRef("t1", store=store), sinks=[collect(seen)]
    )

    assert result.output == "fine"  # the server took the request: no orphan tool message
    sent = openai_server.requests[0]["messages"]
    count = await tokens_for("openai/gpt-4o-mini")
    assert count is not None  # litellm knows this model's tokenizer
    assert sum(count(m) for m in sent) <= 1_000
    assert sent[0] == {"role": "system", "content": "You answer briefly."}
    assert sent[-1] == {"role": "user", "content": "and now?"}
    assert sent[1]["role"] != "tool"
    assert 4 < len(sent) < 1_201  # some of the thread, not all of it
    compacted = [e for e in seen if getattr(e, "name", None) == "ContextCompacted"]
    assert compacted[0].value["dropped"] == 1_201 - (len(sent) - 1)
    assert compacted[0].value["summarized"] is False
    thread = await store.get_thread("t1")  # the thread keeps everything
    assert thread is not None and len(thread.messages) == 1_202


async def test_without_a_budget_a_call_and_its_result_stay_together() -> None:
    store = MemoryStore()
    await build_thread(store, "t1", 10)
    model = ScriptedModel(["ok"])
    policy = ContextPolicy(max_messages=2)  # would start at a tool result: moves past it
    agent = Agent("a", model=model, context_policy=policy)
    await Network("chat", agents=[agent]).run("next", thread=ThreadRef("t1", store=store))
    history = model.requests[0].history
    assert [m.role for m in history] == ["user"]  # tool pair dropped whole, newest turn kept


def collect(seen: list[Any]) -> Any:
    async def sink(event: Any) -> None:
        seen.append(event)

    return sink


def summary_of(calls: list[tuple[int, str | None]]) -> Any:
    async def summarize(messages: list[Any], previous: str | None) -> str:
        calls.append((len(messages), previous))
        return f"summary {len(calls)}"

    return summarize


async def test_a_summary_is_written_once_and_reused_by_later_runs() -> None:
    store = MemoryStore()
    await build_thread(store, "t1", 20)  # 60 messages
    calls: list[tuple[int, str | None]] = []
    requests: list[ModelRequest] = []

    def reply(request: ModelRequest) -> str:
        requests.append(request)
        return "ok"

    policy = ContextPolicy(max_messages=10, summarize=summary_of(calls))
    network = Network(
        "chat", agents=[Agent("a", model=ScriptedModel(reply))], context_policy=policy
    )
    events: list[list[Any]] = []
    for text in ("one", "two", "three"):
        seen: list[Any] = []
        run = await network.run(text, thread=ThreadRef("t1", store=store), sinks=[collect(seen)])
        events.append([e.value for e in seen if getattr(e, "name", "") == "ContextCompacted"])

    assert calls == [(57, None)]  # one summary, of all but the newest turns, once
    thread = await store.get_thread("t1")
    assert thread is not None and len(thread.messages) == 66  # nothing stored was dropped
    [summary] = thread.summaries
    assert (summary.text, summary.covers, summary.by) == ("summary 1", 57, "summarize")
    assert summary.agent == "a" and summary.run_id is not None and summary.previous == 0
    assert summary.run_id != run.run_id  # written by the first run, reused by the third
    for request in requests:
        system = request.system[-1]
        assert isinstance(system, SystemMessage) and system.content.endswith("summary 1")
        assert len(request.history) <= 9
    assert [e[0]["newSummary"] for e in events] == [True, False, False]
    assert all(e[0]["summarized"] and e[0]["summaryCovers"] == 57 for e in events)


async def test_a_summary_is_extended_when_what_follows_it_no_longer_fits() -> None:
    store = MemoryStore()
    await build_thread(store, "t1", 10)
    calls: list[tuple[int, str | None]] = []
    policy = ContextPolicy(max_messages=4, summarize=summary_of(calls))
    network = Network(
        "chat", agents=[Agent("a", model=ScriptedModel(["ok"] * 5))], context_policy=policy
    )
    for text in ("one", "two", "three"):
        await network.run(text, thread=ThreadRef("t1", store=store))
    assert calls[0] == (30, None)
    assert calls[1][1] == "summary 1"  # the old summary plus only the turns after it
    assert calls[1][0] < 5
    thread = await store.get_thread("t1")
    assert thread is not None
    assert [s.previous for s in thread.summaries] == [
        0,
        30,
        *[s.previous for s in thread.summaries[2:]],
    ]


async def test_an_agent_summarises() -> None:
    store = MemoryStore()
    await build_thread(store, "t1", 10)
    cheap = ScriptedModel(["they looked numbers up"])
    summarizer = Agent("summarizer", model=cheap)
    policy = ContextPolicy(max_messages=4, summarize=summarizer)
    model = ScriptedModel(["ok"])
    await Network("chat", agents=[Agent("a", model=model, context_policy=policy)]).run(
        "next", thread=ThreadRef("t1", store=store)
    )
    assert "question 0" in cheap.requests[0].history[-1].content
    assert model.requests[0].system[-1].content.endswith("they looked numbers up")
    thread = await store.get_thread("t1")
    assert thread is not None and thread.summaries[0].by == "summarizer"


async def test_long_tool_results_are_sent_trimmed_and_stored_whole() -> None:
    store = MemoryStore()
    await build_thread(store, "t1", 3, result_text="y" * 5_000)
    model = ScriptedModel(["ok"])
    agent = Agent("a", model=model, context_policy=ContextPolicy(max_tool_result_chars=100))
    await Network("chat", agents=[agent]).run("next", thread=ThreadRef("t1", store=store))
    tools = [m for m in model.requests[0].history if isinstance(m, ToolMessage)]
    assert len(tools) == 3
    for message in tools:
        assert message.content.startswith("y" * 100 + "\n[trimmed: 100 of 5000 characters")
        assert "is in the thread's history" in to_wire(message)["content"]
    thread = await store.get_thread("t1")
    assert thread is not None
    assert [len(m.content) for m in thread.messages if isinstance(m, ToolMessage)] == [5_000] * 3


def test_a_bad_policy_names_its_field() -> None:
    with pytest.raises(ConfigurationError, match="max_tokens"):
        ContextPolicy(max_tokens=0)
    with pytest.raises(ConfigurationError, match="summarize"):
        ContextPolicy(summarize="cheap model")
    with pytest.raises(ConfigurationError, match="summary_target"):
        ContextPolicy(summary_target=0)


async def test_a_compaction_is_logged() -> None:
    from structlog.testing import capture_logs

    store = MemoryStore()
    await build_thread(store, "t1", 10)
    agent = Agent("a", model=ScriptedModel(["ok"]), context_policy=ContextPolicy(max_messages=4))
    with capture_logs() as logs:
        await Network("chat", agents=[agent]).run("next", thread=ThreadRef("t1", store=store))
    [entry] = [e for e in logs if e["event"] == "context.compacted"]
    assert (entry["agent"], entry["messages"], entry["dropped"]) == ("a", 31, 27)
