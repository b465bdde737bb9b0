"""`AgentCall`: what an agent call's stages share; `ToolUse`: one tool call about to run."""

from __future__ import annotations

from typing import Any

from agents import Agent
from network import AgentCall, ToolCall, ToolCallRecord
from network.run.agent_call import NO_OUTPUT
from network.run.context import RunContext


def a_call() -> AgentCall:
    ctx: Any = RunContext.__new__(RunContext)  # no run: only the call's own bookkeeping
    return AgentCall(Agent("a"), ctx, [], ())


def test_records_set_aside_take_their_calls_place_in_the_models_order() -> None:
    call = a_call()
    asked = [ToolCall("1", "x", {}), ToolCall("2", "y", {}), ToolCall("3", "z", {})]
    ran = [ToolCallRecord(id="1", name="x"), ToolCallRecord(id="3", name="z")]
    assert call.in_model_order(asked, ran) is ran  # nothing set aside: as they ran
    call.set_aside(ToolCallRecord(id="2", name="y", content="refused", is_error=True))
    assert [r.id for r in call.in_model_order(asked, ran)] == ["1", "2", "3"]


def test_a_note_is_made_once_per_key_and_call() -> None:
    call = a_call()
    made = call.note("k", lambda: {"n": 1})
    assert call.note("k", dict) is made
    assert a_call().note("k", dict) == {}
    assert call.output is NO_OUTPUT and repr(NO_OUTPUT) == "NO_OUTPUT"
