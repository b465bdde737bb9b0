"""What each agent sees: other agents' turns as context, never as its own; "input"; a
function; an agent's own view over its network's."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call, tool
from network import AssistantMessage, ConfigurationError, MessageError, Network, UserMessage
from network.capabilities.view import as_context

pytestmark = pytest.mark.anyio


def three(**options: Any) -> tuple[Network, ScriptedModel]:
    """planner answers, search calls a tool then answers, writer is the third agent."""

    @tool
    def web_search(q: str) -> str:
        """Search."""
        return f"hits for {q}"

    planner = Agent("planner", model=ScriptedModel(["the plan"]))
    search = Agent(
        "search",
        tools=[web_search],
        model=ScriptedModel([call("web_search", q="owls"), "owls found"]),
    )
    writer_model = ScriptedModel(["the report"])
    writer = Agent("writer", model=writer_model, **options)
    order = [planner, search, search, writer]

    def router(ctx: Any) -> Any:
        return order[ctx.call_count] if ctx.call_count < len(order) else None

    return Network("team", agents=[planner, search, writer], router=router), writer_model


async def test_other_agents_turns_reach_an_agent_as_context_not_as_its_own() -> None:
    network, writer_model = three()
    result = await network.run("write about owls")

    (request,) = writer_model.requests
    assert [m.role for m in request.history] == ["user"] * 5  # never an assistant turn
    assert [m.content for m in request.history] == [
        "write about owls",
        "[agent 'planner' answered] the plan",
        '[agent \'search\' called tool web_search with {"q": "owls"}]',
        "[tool web_search returned to agent 'search'] hits for owls",
        "[agent 'search' answered] owls found",
    ]
    # only what is sent changes: the conversation keeps every message as it was
    assert [m.role for m in result.messages] == [
        "user", "assistant", "assistant", "tool", "assistant", "assistant",
    ]  # fmt: skip


async def test_an_agent_sees_its_own_turns_as_its_own() -> None:
    @tool
    def look() -> str:
        """Look."""
        return "seen"

    model = ScriptedModel([call("look"), "done"])
    looker = Agent("looker", tools=[look], model=model)
    other = Agent("other", model=ScriptedModel(["hi"]))
    order = [other, looker, looker]
    network = Network(
        "n",
        agents=[other, looker],
        router=lambda c: order[c.call_count] if c.call_count < 3 else None,
    )
    await network.run("go")
    assert [m.role for m in model.requests[1].history] == ["user", "user", "assistant", "tool"]


async def test_the_input_view_sends_only_this_runs_input_and_own_turns() -> None:
    network, writer_model = three(view="input")
    await network.run("write about owls")
    (request,) = writer_model.requests
    assert [(m.role, m.content) for m in request.history] == [("user", "write about owls")]


async def test_a_view_function_chooses_from_the_context_view() -> None:
    seen: list[Any] = []

    async def last_two(ctx: Any, messages: list[Any]) -> list[Any]:
        seen.append(ctx.input)
        return messages[-2:]

    network, writer_model = three(view=last_two)
    await network.run("write about owls")
    (request,) = writer_model.requests
    assert [m.content for m in request.history] == [
        "[tool web_search returned to agent 'search'] hits for owls",
        "[agent 'search' answered] owls found",
    ]
    assert seen == ["write about owls"]


async def test_a_networks_view_is_every_agents_default_and_an_agents_own_replaces_it() -> None:
    network, writer_model = three()
    network = Network(
        "team", agents=list(network.agents.values()), router=network.router, view="input"
    )
    await network.run("write about owls")
    assert [m.content for m in writer_model.requests[0].history] == ["write about owls"]


async def test_a_view_function_that_returns_no_messages_fails_naming_the_agent() -> None:
    network, _ = three(view=lambda ctx, messages: ["not a message", 3])
    with pytest.raises(MessageError, match="agent 'writer'.*view function"):
        await network.run("go")


def test_a_bad_view_is_refused_naming_the_agent() -> None:
    with pytest.raises(ConfigurationError, match="agent 'a'.*'all', 'input'"):
        Agent("a", model=ScriptedModel([]), view="everything")


def test_a_history_without_other_agents_is_sent_as_it_is() -> None:
    history = [UserMessage("hi"), AssistantMessage("hello", name="me"), AssistantMessage("x")]
    assert as_context(history, "me") is history


def test_a_reused_tool_call_id_belongs_to_the_latest_call_that_used_it() -> None:
    """Models reuse ids across turns (and a resumed process's scripted model starts its ids
    over): an agent's own tool result stays its own even when another agent's earlier call
    had the same id."""
    from network import ToolCall, ToolMessage

    theirs = AssistantMessage(None, tool_calls=[ToolCall("call_0", "note", {})], name="planner")
    mine = AssistantMessage(None, tool_calls=[ToolCall("call_0", "note", {})], name="writer")
    history = [
        UserMessage("go"),
        theirs,
        ToolMessage(tool_call_id="call_0", content="noted", name="note"),
        mine,
        ToolMessage(tool_call_id="call_0", content="noted", name="note"),
    ]
    shown = as_context(history, "writer")
    assert shown[-2] is mine and shown[-1] is history[-1]
    assert isinstance(shown[2], UserMessage) and "returned to agent 'planner'" in shown[2].content
