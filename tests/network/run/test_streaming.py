"""`network.stream`: the run's AG-UI events, in valid order, from the one run loop."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import structlog
from ag_ui.core import BaseEvent

from agents import Agent, ScriptedModel, TextDelta, call, tool
from agents.models.base import ModelRequest, ModelResponse
from network import Network
from network.errors import ModelError
from tests.network.agui.networks import codegen_network
from tests.network.agui.protocol import replay, wire

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


async def collect(network: Network, text: str = "go", **kwargs: Any) -> tuple[list[Any], Any]:
    async with network.stream(text, **kwargs) as events:
        got = [event async for event in events]
    return got, events.result


async def test_stream_yields_agui_models_in_order() -> None:
    events, result = await collect(codegen_network())
    assert all(isinstance(event, BaseEvent) for event in events)
    run = replay(wire(events))
    types = run.types
    assert types[:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
    assert types[-1] == "RUN_FINISHED"
    assert run.finished["result"]["output"] == result.output
    assert run.finished["result"]["stopReason"] == "router_finished"
    # one STEP_STARTED / STEP_FINISHED pair per agent call, named after the agent
    steps = [e["stepName"] for e in run.of("STEP_STARTED")]
    assert steps == [r.agent for r in result.results]
    assert steps == ["planner", "coder", "reviewer", "coder", "reviewer"]
    assert [e["stepName"] for e in run.of("STEP_FINISHED")] == steps
    # the planner's text, streamed in chunks, with the agent's name on the message
    start = run.of("TEXT_MESSAGE_START")[0]
    assert start["name"] == "planner" and start["role"] == "assistant"
    text = "".join(
        e["delta"] for e in run.of("TEXT_MESSAGE_CONTENT") if e["messageId"] == start["messageId"]
    )
    assert text == result.state.kv.get("plan")
    # every tool call: START, ARGS..., END, RESULT
    for start in run.of("TOOL_CALL_START"):
        call_id = start["toolCallId"]
        mine = [e["type"] for e in run.events if e.get("toolCallId") == call_id]
        assert mine[0] == "TOOL_CALL_START" and mine[-1] == "TOOL_CALL_RESULT"
        assert mine[-2] == "TOOL_CALL_END" and "TOOL_CALL_ARGS" in mine
    assert run.state == result.state.snapshot()


async def test_state_deltas_carry_exactly_the_recorded_operations() -> None:
    events, result = await collect(codegen_network())
    run = replay(wire(events))
    sent = [op for event in run.of("STATE_DELTA") for op in event["delta"]]
    recorded = [op for r in result.results for op in r.state_delta]
    assert sent == recorded
    assert {
        "op": "add",
        "path": "/files/tests~1test_add.py",
        "value": "assert add(2, 3) == 5\n",
    } in sent
    # one delta per batch: after each agent call that changed something, before STEP_FINISHED
    for index, event in enumerate(run.events):
        if event["type"] == "STATE_DELTA":
            assert run.events[index + 1]["type"] in ("STEP_FINISHED", "STATE_DELTA")


async def test_scripted_model_streams_text_and_arguments_in_chunks() -> None:
    model = ScriptedModel(
        ["Hello, streaming world", call("write_files", files={"a": "1"})], chunk_size=4
    )
    chunks: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        chunks.append(chunk)

    request = ModelRequest(system=[], history=[])
    await model.complete(request, on_chunk)
    assert [c.text for c in chunks] == ["Hell", "o, s", "trea", "ming", " wor", "ld"]
    chunks.clear()
    await model.complete(request, on_chunk)
    assert chunks[0].name == "write_files" and chunks[0].id
    assert "".join(c.arguments for c in chunks) == '{"files": {"a": "1"}}'
    assert all(len(c.arguments) <= 4 for c in chunks)


async def test_stream_carries_each_chunk_as_a_delta() -> None:
    agent = Agent("writer", model=ScriptedModel(["one two three four"], chunk_size=3))
    events, _ = await collect(Network("solo", agents=[agent]))
    run = replay(wire(events))
    deltas = [e["delta"] for e in run.of("TEXT_MESSAGE_CONTENT")]
    assert deltas == ["one", " tw", "o t", "hre", "e f", "our"]


class FailingModel:
    """Streams some text, then fails like a provider dropping the connection."""

    name = "failing"

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
        if on_chunk is not None:
            await on_chunk(TextDelta("partial answ"))
        raise ModelError("connection reset", model=self.name)


async def test_run_error_closes_everything_and_is_last() -> None:
    agent = Agent("talker", model=FailingModel())
    network = Network("failing", agents=[agent])
    seen: list[Any] = []
    with pytest.raises(ModelError, match="connection reset"):
        async with network.stream("go") as events:
            async for event in events:
                seen.append(event)
    run = replay(wire(seen), allow_error=True)
    assert run.types[-3:] == ["TEXT_MESSAGE_END", "STEP_FINISHED", "RUN_ERROR"]
    assert run.error["code"] == "ModelError"


async def test_a_failing_tool_closes_its_call_and_the_run_goes_on() -> None:
    @tool
    def explode() -> str:
        """Fails."""
        raise RuntimeError("boom")

    agent = Agent("a", tools=[explode], model=ScriptedModel([call("explode"), "recovered"]))
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    events, result = await collect(network)
    run = replay(wire(events))
    (outcome,) = run.of("TOOL_CALL_RESULT")
    assert "boom" in outcome["content"]
    assert result.output == "recovered"


async def test_leaving_the_stream_early_cancels_the_run_and_closes_everything() -> None:
    started = anyio.Event()

    @tool
    async def slow() -> str:
        """Takes forever."""
        started.set()
        await anyio.sleep(30)
        return "never"

    model = ScriptedModel([call("slow"), "after"])
    agent = Agent("a", tools=[slow], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    side: list[Any] = []

    async def side_sink(event: Any) -> None:
        side.append(event)

    with anyio.fail_after(5):
        async with network.stream("go", sinks=[side_sink]) as events:
            async for event in events:
                if event.type == "TOOL_CALL_END":
                    await started.wait()
                    break
    assert len(model.requests) == 1  # the second call never happened
    run = replay(wire(side))  # the other sink heard the run close cleanly
    assert run.finished["outcome"] == {"type": "cancelled"}
    assert run.types[-2:] == ["STEP_FINISHED", "RUN_FINISHED"]


async def test_a_cancelled_run_closes_open_steps_messages_and_tools() -> None:
    streaming = anyio.Event()

    class Stalling:
        name = "stalling"

        async def complete(self, request: Any, on_chunk: Any = None) -> Any:
            await on_chunk(TextDelta("thinking"))
            streaming.set()
            await anyio.sleep(30)

    network = Network("n", agents=[Agent("a", model=Stalling())])
    seen: list[Any] = []

    async def sink(event: Any) -> None:
        seen.append(event)

    # cancelled once its message is open (a fixed 0.2 s could end the run before it was)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: network.run("go", sinks=[sink]))
            await streaming.wait()
            group.cancel_scope.cancel()
    run = replay(wire(seen))
    assert run.types[-3:] == ["TEXT_MESSAGE_END", "STEP_FINISHED", "RUN_FINISHED"]
    assert run.finished["outcome"] == {"type": "cancelled"}


async def test_run_is_the_same_loop_as_stream() -> None:
    seen: list[Any] = []

    async def sink(event: Any) -> None:
        seen.append(event)

    result = await codegen_network().run("go", sinks=[sink])
    streamed, _ = await collect(codegen_network())
    assert [e.type for e in seen] == [e.type for e in streamed]
    assert replay(wire(seen)).state == result.state.snapshot()


async def test_no_event_is_built_without_a_consumer(monkeypatch: pytest.MonkeyPatch) -> None:
    from network import events as builders

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an event was built with no sink attached")

    for name in builders.__all__:
        if name[0].islower():
            monkeypatch.setattr(builders, name, forbidden)
    result = await codegen_network().run("go")
    assert result.state.kv.get("review")["approved"] is True


async def test_logs_are_written_from_the_events() -> None:
    structlog.reset_defaults()
    with structlog.testing.capture_logs() as logs:
        await codegen_network().run("go")
    names = [entry["event"] for entry in logs]
    assert names[0] == "run.started" and names[-1] == "run.finished"
    assert names.count("agent.started") == 5 and names.count("tool.called") == 4
    assert {entry["run_id"] for entry in logs if "run_id" in entry} == {logs[0]["run_id"]}
