"""`FollowHandoffs`: the router of a network with handoffs and no router of its own."""

from __future__ import annotations

import pytest

from agents import Agent, ScriptedModel, call
from network import Network, State
from network.history.handoffs import HandoffRecord
from network.history.results import InferenceResult
from network.run.handoff_router import FollowHandoffs
from tests.agents.airline import team

pytestmark = pytest.mark.anyio


def test_a_network_with_handoffs_and_no_router_follows_them_from_its_first_agent() -> None:
    network, *_ = team()
    assert isinstance(network.router, FollowHandoffs)
    assert network.router.entry == "triage"


async def test_it_starts_with_the_active_agent_of_a_continued_state_and_not_a_stranger() -> None:
    network, triage, _faq, _ = team(["never"], ["Wifi is free."])
    state = State()
    state.add_result(
        InferenceResult("triage", handoff=HandoffRecord("triage", "FAQ Agent", "", "c1"))
    )
    result = await network.run("Wifi?", state=state)
    assert [r.agent for r in result.results][1:] == ["FAQ Agent"]
    assert triage.model.requests == []

    # a conversation last held by an agent this network does not have starts at the first
    network, triage, *_ = team(["Hello."])
    gone = State()
    gone.add_result(InferenceResult("retired_agent"))
    result = await network.run("Hi", state=gone)
    assert [r.agent for r in result.results][1:] == ["triage"]


async def test_it_runs_an_agent_again_after_its_tools_and_stops_at_an_answer() -> None:
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    helper = Agent("helper", model=ScriptedModel(["unused"]))
    lead = Agent(
        "lead",
        tools=[weather],
        handoffs=[helper],
        model=ScriptedModel([call("weather", city="Oslo"), "It is sunny in Oslo."]),
    )
    result = await Network("n", agents=[lead, helper]).run("Weather?")

    assert [r.agent for r in result.results] == ["lead", "lead"]
    assert result.output == "It is sunny in Oslo."
    assert helper.model.requests == []  # type: ignore[union-attr]


async def test_one_agent_without_a_router_or_handoffs_runs_once() -> None:
    """docs/routers.md: one call; its tool runs, but its model never reads the result (unlike
    a network whose agents hand off, above, which runs an agent again after its tools)."""
    from agents import tool

    @tool
    def save(text: str) -> str:
        """Save a text."""
        return "saved"

    model = ScriptedModel([call("save", text="hi"), "Saved it."])
    result = await Network("n", agents=[Agent("a", tools=[save], model=model)]).run("go")
    assert len(result.results) == 1 and result.results[0].tool_calls[0].content == "saved"
    assert result.output is None and len(model.requests) == 1
