"""Behaviour the README documents, checked as written."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from agents.context._template import Template
from network import Network, State

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


@pytest.mark.parametrize(
    "text",
    [
        '{"a": {"b": {"c": 1}}}',
        'Answer as {"files": {"path": "text"}} and nothing else.',
        '[{"a": {}}, {"b": {"c": {"d": []}}}]',
    ],
)
def test_nested_json_in_instructions_reaches_the_model_as_written(text: str) -> None:
    rendered = Template(text).render(State().kv)
    assert rendered == text


def test_escaped_braces_still_give_literal_braces() -> None:
    kv = State({"plan": "P"}).kv
    assert Template("{{plan}} is {plan}").render(kv) == "{plan} is P"
    assert Template('{{"a": {{"b": 1}}}}').render(kv) == '{"a": {"b": 1}}'
    assert Template('Example: {"plan": {plan}}').render(kv) == 'Example: {"plan": P}'


async def test_output_key_stores_the_final_answer_not_the_text_beside_a_tool_call() -> None:
    @tool
    def search(query: str) -> str:
        """Search the docs."""
        return "the docs say 42"

    from network.history.messages import AssistantMessage, ToolCall

    look = AssistantMessage(
        "Let me look that up.", tool_calls=[ToolCall("c1", "search", {"query": "q"})]
    )
    agent = Agent(
        "researcher",
        tools=[search],
        model=ScriptedModel([look, "The answer is 42."]),
        output_key="answer",
    )
    seen: list[bool] = []

    def route(ctx: Any) -> Any:  # the README's pattern: run until the key is there
        seen.append(ctx.kv.has("answer"))
        return None if ctx.kv.has("answer") else agent

    result = await Network("n", agents=[agent], router=route).run("what is it?")
    assert seen == [False, False, True]  # not set by the first call's "Let me look that up."
    assert result["answer"] == "The answer is 42."


async def test_a_key_set_then_deleted_in_one_answer_ends_deleted() -> None:
    @tool
    def remember(ctx: ToolContext) -> str:
        """Note a draft."""
        ctx.kv.set("draft", "v1")
        return "noted"

    @tool
    def forget(ctx: ToolContext) -> str:
        """Drop the draft."""
        ctx.kv.delete("draft")
        return "dropped"

    agent = Agent(
        "a", tools=[remember, forget], model=ScriptedModel([[call("remember"), call("forget")]])
    )
    result = await Network("n", agents=[agent]).run("go")
    assert "draft" not in result
    # and the other order: deleted first, then set, ends set
    agent = Agent(
        "b", tools=[remember, forget], model=ScriptedModel([[call("forget"), call("remember")]])
    )
    result = await Network("n", agents=[agent]).run("go", state={"draft": "v0"})
    assert result["draft"] == "v1"
