"""Tools that need confirmation: interrupt, then accept (run) or reject (roll back)."""

from __future__ import annotations

from typing import Any

import pytest

from agents import ScriptedModel, call
from network import StopReason
from network.run.interrupts import InterruptError
from tests.network.agui.networks import PANCAKES, chef_script, recipe_network
from tests.network.agui.protocol import replay, wire

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

OLD = {"title": "Toast", "steps": ["toast"], "minutes": 3}


class Sink:
    def __init__(self) -> None:
        self.events: list[Any] = []

    async def __call__(self, event: Any) -> None:
        self.events.append(event)


async def interrupted(calls: list[str], **kwargs: Any) -> tuple[Any, Any, Any]:
    network = recipe_network(confirm=True, calls=calls, **kwargs)
    sink = Sink()
    result = await network.run("pancakes", state={"recipe": OLD, "servings": 2}, sinks=[sink])
    return network, result, replay(wire(sink.events), state={})


async def test_the_tool_waits_and_the_run_ends_with_an_interrupt() -> None:
    calls: list[str] = []
    _, result, run = await interrupted(calls)
    assert calls == []  # not run
    assert result.stop_reason == StopReason.INTERRUPTED
    (interrupt,) = result.interrupts
    assert interrupt.tool == "create_recipe" and interrupt.agent == "chef"
    assert interrupt.arguments == {"recipe_data": PANCAKES}
    assert interrupt.proposal == {"recipe": PANCAKES}
    assert interrupt.checkpoint == {"recipe": OLD, "servings": 2}  # the state before it
    # the server's state is untouched; the client is shown the proposal
    assert result["recipe"] == OLD
    assert run.state == {"recipe": PANCAKES, "servings": 2}
    outcome = run.finished["outcome"]
    assert outcome["type"] == "interrupt"
    (sent,) = outcome["interrupts"]
    assert sent["id"] == interrupt.id and sent["reason"] == "confirmation_required"
    assert sent["toolCallId"] == interrupt.tool_call_id
    assert sent["responseSchema"]["required"] == ["approved"]
    # the model's tool call was shown in full before the run ended
    assert run.of("TOOL_CALL_END")[0]["toolCallId"] == interrupt.tool_call_id
    assert not run.of("TOOL_CALL_RESULT")


async def test_accepting_runs_the_tool_with_the_stored_arguments() -> None:
    calls: list[str] = []
    network, first, _ = await interrupted(calls)
    sink = Sink()
    result = await network.run(first.resume([first.interrupts[0].accept()]), sinks=[sink])
    run = replay(wire(sink.events))
    assert calls == ["Pancakes"]
    assert result["recipe"] == PANCAKES and result.output == "Enjoy!"
    assert result.stop_reason == StopReason.ROUTER_FINISHED and not result.interrupts
    (outcome,) = run.of("TOOL_CALL_RESULT")
    assert outcome["toolCallId"] == first.interrupts[0].tool_call_id
    assert outcome["content"] == "saved Pancakes"
    assert run.state == result.state.snapshot()
    # the conversation pairs the model's call with its result
    tool_message = next(m for m in result.messages if m.role == "tool")
    assert tool_message.tool_call_id == first.interrupts[0].tool_call_id


async def test_rejecting_restores_the_checkpoint_and_tells_the_model() -> None:
    calls: list[str] = []
    model = ScriptedModel(chef_script, chunk_size=7)
    network, first, client = await interrupted(calls, model=model)
    assert client.state["recipe"] == PANCAKES  # the client's optimistic copy
    sink = Sink()
    answer = first.interrupts[0].reject("too sweet")
    result = await network.run(first.resume([answer]), sinks=[sink])
    run = replay(wire(sink.events), state=client.state)
    assert calls == []
    assert result["recipe"] == OLD
    assert run.events[2] == {"type": "STATE_SNAPSHOT", "snapshot": {"recipe": OLD, "servings": 2}}
    assert run.state == {"recipe": OLD, "servings": 2}
    (outcome,) = run.of("TOOL_CALL_RESULT")
    assert "rejected" in outcome["content"] and "too sweet" in outcome["content"]
    last_request = model.requests[-1]
    assert (
        last_request.history[-1].role == "tool" and "rejected" in last_request.history[-1].content
    )
    assert result.output == "Enjoy!"


async def test_rejection_never_trusts_a_state_holding_the_proposal() -> None:
    network, first, _ = await interrupted([])
    optimistic = first.state
    optimistic.kv.set("recipe", PANCAKES)  # as if the caller applied the proposal itself
    result = await network.run(first.resume([first.interrupts[0].reject()]))
    assert result["recipe"] == OLD


async def test_every_pending_interrupt_must_be_answered() -> None:
    network, first, _ = await interrupted([])
    with pytest.raises(InterruptError, match="not answered"):
        await network.run(first.resume([]))
    with pytest.raises(InterruptError, match="no pending interrupt has id nope"):
        await network.run(first.resume({"nope": True}))
    done = await network.run(first.resume({first.interrupts[0].id: True}))
    with pytest.raises(InterruptError, match="did not stop on an interrupt"):
        await network.run(done.resume([]))


async def test_invalid_arguments_are_not_held_for_confirmation() -> None:
    calls: list[str] = []
    model = ScriptedModel([call("create_recipe", recipe_data="not a dict"), "sorry"])
    network = recipe_network(confirm=True, model=model, calls=calls)
    result = await network.run("pancakes")
    assert not result.interrupts and calls == []
    record = result.results[0].tool_calls[0]
    assert record.is_error and "recipe_data" in record.content
