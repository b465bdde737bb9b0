"""Predictive state: STATE_DELTAs from partial tool arguments, committed through the schema."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call, tool
from network import ConfigurationError, Network
from network.capabilities.predictive.streaming import parse_partial
from tests.network.agui.networks import PANCAKES, PREDICT, RECIPE_SCHEMA, recipe_network
from tests.network.agui.protocol import replay, wire

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


async def events_of(network: Network, **kwargs: Any) -> tuple[Any, Any]:
    async with network.stream("pancakes please", **kwargs) as events:
        got = [event async for event in events]
    return replay(wire(got)), events.result


def test_partial_json_is_parsed_by_a_real_parser() -> None:
    assert parse_partial('{"recipe_data": {"title": "Pan') == {"recipe_data": {"title": "Pan"}}
    assert parse_partial('{"a": [1, {"b": [true, nu') == {"a": [1, {"b": [True]}]}
    assert parse_partial('{"a": "x\\"y') == {"a": 'x"y'}
    assert parse_partial('{"a') == {}
    assert parse_partial("") is None
    assert parse_partial("not json") is None


def test_predict_state_is_checked_when_the_network_is_defined() -> None:
    chef = recipe_network().agents["chef"]
    with pytest.raises(ConfigurationError, match="names tool 'create_recipes', which no agent"):
        Network("r", agents=[chef], predict_state={"recipe": {"tool": "create_recipes"}})
    with pytest.raises(ConfigurationError, match="unknown fields"):
        Network("r", agents=[chef], predict_state={"recipe": {"tool": "create_recipe", "arg": "x"}})


async def test_predict_state_is_announced_right_after_run_started() -> None:
    run, _ = await events_of(recipe_network())
    assert run.types[:3] == ["RUN_STARTED", "CUSTOM", "STATE_SNAPSHOT"]
    custom = run.events[1]
    assert custom["name"] == "PredictState"
    assert custom["value"] == [
        {"state_key": "recipe", "tool": "create_recipe", "tool_argument": "recipe_data"}
    ]


async def test_state_deltas_follow_the_arguments_as_they_stream() -> None:
    run, result = await events_of(recipe_network())
    start = run.types.index("TOOL_CALL_START")
    end = run.types.index("TOOL_CALL_END")
    predicted = [
        event["delta"] for event in run.events[start:end] if event["type"] == "STATE_DELTA"
    ]
    assert len(predicted) >= 4  # the value grows while the arguments stream
    for delta in predicted:
        assert delta == [{"op": "add", "path": "/recipe", "value": delta[0]["value"]}]
    values = [delta[0]["value"] for delta in predicted]
    assert {"title": "P"} in values  # a string cut mid-way is shown as far as it goes
    assert values[-1] == PANCAKES
    # every delta applied cleanly on the client's copy (replay), which ends equal to the server
    assert run.state == result.state.snapshot() == {"recipe": PANCAKES}


async def test_the_value_is_committed_through_the_schema_when_the_tool_runs() -> None:
    result = await recipe_network().run("pancakes please")  # no consumer: same outcome
    assert result["recipe"] == PANCAKES
    (write,) = result.state.history_of("recipe")
    assert write.writer.tool == "create_recipe"
    assert result.results[0].state_delta == [{"op": "add", "path": "/recipe", "value": PANCAKES}]


async def test_a_value_the_schema_rejects_is_taken_back_from_the_client() -> None:
    network = recipe_network(schema={"recipe": {"type": dict[str, int]}})
    run, result = await events_of(network)
    (outcome,) = run.of("TOOL_CALL_RESULT")
    assert "state update failed" in outcome["content"] and "recipe" in outcome["content"]
    assert not result.state.kv.has("recipe")
    assert {"op": "remove", "path": "/recipe"} in [
        op for event in run.of("STATE_DELTA") for op in event["delta"]
    ]
    assert run.state == result.state.snapshot()


async def test_a_failing_tool_restores_the_previous_value() -> None:
    @tool
    def create_recipe(recipe_data: dict[str, Any]) -> str:
        """Fails after the arguments streamed."""
        raise RuntimeError("disk full")

    old = {"title": "Toast", "steps": ["toast"], "minutes": 3}
    chef = Agent(
        "chef",
        tools=[create_recipe],
        model=ScriptedModel([call("create_recipe", recipe_data=PANCAKES)], chunk_size=9),
    )
    network = Network("r", agents=[chef], state_schema=RECIPE_SCHEMA, predict_state=PREDICT)
    run, result = await events_of(network, state={"recipe": old, "servings": 2})
    assert result["recipe"] == old
    assert run.state == result.state.snapshot() == {"recipe": old, "servings": 2}
    assert run.of("STATE_DELTA")[-1]["delta"] == [{"op": "add", "path": "/recipe", "value": old}]
