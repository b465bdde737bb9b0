"""Predictive state: STATE_DELTAs from partial tool arguments, committed through the schema."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call, client_tool, tool
from network import ConfigurationError, Network, StateSchema
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
    # a tool no agent has is one a caller declares (a frontend tool): see the tests below
    Network("r", agents=[chef], predict_state={"recipe": {"tool": "write_document"}})
    with pytest.raises(ConfigurationError, match="tool must be a tool's name"):
        Network("r", agents=[chef], predict_state={"recipe": {"tool": ""}})
    with pytest.raises(ConfigurationError, match="unknown fields"):
        Network("r", agents=[chef], predict_state={"recipe": {"tool": "create_recipe", "arg": "x"}})
    # before: an AttributeError, or accepted and every call of the tool failing its state
    # update at run time, after the model was paid for
    with pytest.raises(ConfigurationError, match="predict_state must be a mapping"):
        Network("r", agents=[chef], predict_state=[("recipe", {"tool": "create_recipe"})])  # type: ignore[arg-type]
    for key, why in (("messages", "conversation's name"), ("re\x00cipe", "NUL")):
        with pytest.raises(ConfigurationError, match=f"predict_state.*{why}"):
            Network("r", agents=[chef], predict_state={key: {"tool": "create_recipe"}})
    closed = StateSchema(RECIPE_SCHEMA, closed=True)
    with pytest.raises(ConfigurationError, match="not declared and the schema is closed"):
        Network("r", agents=[chef], state_schema=closed, predict_state={"draft": PREDICT["recipe"]})
    Network("r", agents=[chef], state_schema=closed, predict_state=PREDICT)


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


DOCUMENT = "# Bruce\n\nBruce was a good dog."
WRITE_DOCUMENT = {
    "type": "object",
    "properties": {"document": {"type": "string"}},
    "required": ["document"],
}
PREDICT_DOCUMENT = {"document": {"tool": "write_document", "tool_argument": "document"}}


def writer_network(model: Any, schema: Any = None, **agent_options: Any) -> Network:
    """A writer whose `write_document` is a client tool: its own, or declared by a caller."""
    writer = Agent("writer", model=model, **agent_options)
    return Network(
        "docs",
        agents=[writer],
        state_schema=schema or {"document": {"type": str}},
        predict_state=PREDICT_DOCUMENT,
    )


async def test_a_client_tool_s_arguments_stream_into_state_and_commit_when_handed_over() -> None:
    network = writer_network(
        ScriptedModel([[call("write_document", document=DOCUMENT)]]),
        tools=[client_tool("write_document", "Write the document.", WRITE_DOCUMENT)],
    )
    client, result = await events_of(network)
    (announced,) = client.of("CUSTOM")
    assert announced["value"] == [
        {"state_key": "document", "tool": "write_document", "tool_argument": "document"}
    ]
    start, end = client.types.index("TOOL_CALL_START"), client.types.index("TOOL_CALL_END")
    assert client.types[start:end].count("STATE_DELTA") >= 2  # the document as it streams
    assert result.stop_reason == "client_tool"
    assert [c.name for c in result.pending_tool_calls] == ["write_document"]
    assert result["document"] == DOCUMENT  # committed when the call went to the client
    assert client.state == {"document": DOCUMENT} == result.state.snapshot()
    (write,) = result.state.history_of("document")
    writer = write.writer
    assert (writer.tool, writer.tool_call_id) == ("write_document", result.pending_tool_calls[0].id)


async def test_a_client_tool_s_prediction_commits_without_a_sink_too() -> None:
    network = writer_network(
        ScriptedModel([[call("write_document", document=DOCUMENT)]]),
        tools=[client_tool("write_document", "Write the document.", WRITE_DOCUMENT)],
    )
    result = await network.run("write about Bruce")
    assert result["document"] == DOCUMENT
    assert result.results[0].state_delta == [{"op": "add", "path": "/document", "value": DOCUMENT}]


async def test_a_value_the_schema_refuses_keeps_the_call_from_the_client() -> None:
    network = writer_network(
        ScriptedModel([[call("write_document", document=42)]]),
        tools=[client_tool("write_document", "Write the document.", WRITE_DOCUMENT)],
    )
    client, result = await events_of(network)
    assert result.pending_tool_calls == []  # the model heard about it instead
    record = result.results[0].tool_calls[0]
    assert record.is_error and "state update failed" in record.error
    assert result.stop_reason == "router_finished"  # the run was not handed to the client
    assert "document" not in result and client.state == {}  # the prediction taken back


async def test_an_entry_whose_client_tool_the_run_lacks_is_not_announced() -> None:
    network = writer_network(ScriptedModel(["There is no document tool."]))
    client, result = await events_of(network)
    (announced,) = client.of("CUSTOM")
    assert announced["value"] == []  # no run offers the model `write_document`
    assert result.output == "There is no document tool." and client.state == {}
