"""A new message on a thread that waits on a call: the call gets a result saying it did not
run, before the new message, so the conversation the model gets is one providers accept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents import Agent, ScriptedModel, call, tool
from agents.models._wire import to_wire_list
from network import Network, ThreadRef
from network.history.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from network.history.unanswered import answered, not_run_results, unanswered_calls
from network.threads import SQLStore

PUBLISHED: list[str] = []


@tool(requires_confirmation=True)
def publish(title: str) -> str:
    """Publish a title (a person approves it first)."""
    PUBLISHED.append(title)
    return "published"


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


def provider_rules_hold(wires: list[dict[str, Any]]) -> bool:
    """Every assistant tool call is answered by tool messages before any other message."""
    waiting: set[str] = set()
    for wire in wires:
        if wire["role"] == "tool":
            waiting.discard(wire["tool_call_id"])
            continue
        if waiting:
            return False
        if wire["role"] == "assistant":
            waiting = {c["id"] for c in wire.get("tool_calls", ())}
    return True


def test_only_the_last_assistant_messages_unanswered_calls_count() -> None:
    asked = AssistantMessage(None, [ToolCall("c1", "lookup", {}), ToolCall("c2", "publish", {})])
    conversation = [UserMessage("hi"), asked, ToolMessage("c1", "facts", "lookup")]
    assert [c.id for c in unanswered_calls(conversation)] == ["c2"]
    assert unanswered_calls([*conversation, ToolMessage("c2", "ok", "publish")]) == []
    assert unanswered_calls([UserMessage("hi"), AssistantMessage("hello")]) == []
    assert unanswered_calls([]) == []
    (result,) = not_run_results(conversation)
    assert (result.tool_call_id, result.name, result.is_error) == ("c2", "publish", True)
    assert result.content == (
        "Not run: the user sent a new message instead of answering this call to 'publish'."
    )


@pytest.mark.anyio
async def test_a_new_message_answers_the_waiting_call_as_not_run(tmp_path: Path) -> None:
    PUBLISHED.clear()
    model = ScriptedModel(
        [
            [call("lookup", topic="threads"), call("publish", title="Threads")],
            "Sure, something else then.",
        ]
    )
    network = Network(
        "desk", agents=[Agent("writer", system="Write.", model=model, tools=[lookup, publish])]
    )
    store = str(tmp_path / "threads.db")
    first = await network.run("Publish it", thread=ThreadRef("t1", store=store))
    assert first.stop_reason == "interrupted"

    second = await network.run("Never mind: something else", thread=ThreadRef("t1", store=store))
    assert second.stop_reason != "interrupted"
    assert PUBLISHED == []  # the call it moved on from never ran

    sent = model.requests[-1]
    wires = to_wire_list(sent.system, sent.history)
    assert provider_rules_hold(wires), wires
    (asked,) = [w for w in wires if w.get("tool_calls")]
    publish_id = next(c["id"] for c in asked["tool_calls"] if c["function"]["name"] == "publish")
    (not_run,) = [w for w in wires if w.get("tool_call_id") == publish_id]
    assert not_run["content"].startswith("Not run: the user sent a new message")
    assert wires.index(not_run) < len(wires) - 1  # before the new message
    assert wires[-1] == {"role": "user", "content": "Never mind: something else"}

    async with SQLStore(store) as threads:  # the stored conversation reads the same
        stored = await threads.get_thread("t1")
    assert stored is not None
    assert provider_rules_hold(to_wire_list([], stored.messages))
    assert sum(isinstance(m, ToolMessage) for m in stored.messages) == 2


def test_answered_puts_a_result_before_whatever_follows_a_call_without_one() -> None:
    asked = AssistantMessage(None, [ToolCall("c1", "lookup", {}), ToolCall("c2", "publish", {})])
    later = UserMessage("something else")
    out = answered([asked, ToolMessage("c1", "facts", "lookup"), later])
    assert [type(m).__name__ for m in out] == [
        "AssistantMessage",
        "ToolMessage",
        "ToolMessage",
        "UserMessage",
    ]
    assert (out[2].tool_call_id, out[2].is_error) == ("c2", True)
    waiting = [ToolCall("c9", "show_card", {})]  # the stored conversation ended with it
    assert [m.tool_call_id for m in answered([later], waiting)[:1]] == ["c9"]
    assert answered([asked]) == [asked]  # at the very end: its results may still come
    assert answered([ToolMessage("c9", "shown")], waiting) == [ToolMessage("c9", "shown")]


@pytest.mark.anyio
async def test_a_state_given_whole_gets_its_waiting_calls_answered_as_not_run() -> None:
    """Without a thread: the stopped run's `State` continued with a new message."""
    PUBLISHED.clear()
    model = ScriptedModel([[call("publish", title="Threads")], "Something else, then."])
    network = Network("desk", agents=[Agent("writer", model=model, tools=[publish])])
    first = await network.run("Publish it")
    assert first.stop_reason == "interrupted"

    second = await network.run("Never mind", state=first.state)
    assert PUBLISHED == []
    sent = model.requests[-1]
    wires = to_wire_list(sent.system, sent.history)
    assert provider_rules_hold(wires), wires
    assert wires[-2]["content"].startswith("Not run: the user sent a new message")
    assert wires[-1] == {"role": "user", "content": "Never mind"}
    assert second.output == "Something else, then."
    assert len(first.state.messages) == 2  # the state given is copied, never changed
