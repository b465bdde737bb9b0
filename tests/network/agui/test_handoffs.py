"""Handoffs as AG-UI sub-agents (`network.agui.handoffs`): what the translation sends on.

Fed the events of a run in which `triage` hands off to `faq` (the CUSTOM `Handoff` event the
run streams after the transfer call's result), the translation opens a sub-agent when the
target's call starts, attributes the target's events to it, and closes it before the run
ends; an interrupt the target waits on names the sub-agent.
"""

from __future__ import annotations

from typing import Any

import pytest

from network import events
from network.agui.handoffs import HandoffSubagents

pytestmark = pytest.mark.anyio


class Agent:
    def __init__(self, description: str) -> None:
        self.description = description


class Team:
    def __init__(self) -> None:
        self.agents = {"triage": Agent("Routes."), "faq": Agent("Answers FAQs.")}


def handoff_event(source: str, target: str, call_id: str) -> Any:
    value = {"sourceAgent": source, "targetAgent": target, "toolCallId": call_id, "reason": ""}
    return events.custom("Handoff", value)


def run_events(finished: Any) -> list[Any]:
    return [
        events.run_started("t", "r"),
        events.step_started("triage"),
        events.tool_start("call_1", "transfer_to_faq", None),
        events.tool_end("call_1"),
        events.tool_result("call_1:result", "call_1", "transferred"),
        handoff_event("triage", "faq", "call_1"),
        events.step_finished("triage"),
        events.state_delta([{"op": "add", "path": "/x", "value": 1}]),
        events.step_started("faq"),
        events.text_start("m1", "faq"),
        events.text_content("m1", "Seats are 30 inches apart."),
        events.text_end("m1"),
        events.step_finished("faq"),
        finished,
    ]


async def translate(sequence: list[Any]) -> list[Any]:
    out: list[Any] = []

    async def sink(event: Any) -> None:
        out.append(event)

    translation = HandoffSubagents(sink, Team())
    for event in sequence:
        await translation(event)
    return out


async def test_the_targets_work_is_a_sub_agent() -> None:
    out = await translate(run_events(events.run_finished("t", "r")))
    types = [e.type for e in out]
    start = types.index("SUBAGENT_STARTED")
    assert types[start + 1] == "STEP_STARTED" and out[start + 1].step_name == "faq"
    started = out[start]
    assert (started.name, started.description, started.parent_tool_call_id) == (
        "faq",
        "Answers FAQs.",
        "call_1",
    )
    faq = out[start + 1 : types.index("SUBAGENT_FINISHED")]
    assert [e.type for e in faq] == [
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
    ]
    assert {e.subagent_run_id for e in faq} == {started.subagent_run_id}
    before = out[:start]
    assert all(getattr(e, "subagent_run_id", None) is None for e in before)  # triage's own
    assert types[-2:] == ["SUBAGENT_FINISHED", "RUN_FINISHED"]
    assert out[-2].subagent_run_id == started.subagent_run_id and out[-2].outcome is None


async def test_an_interrupt_of_the_target_names_it_and_suspends_it() -> None:
    interrupt = {
        "id": "int_1",
        "reason": "confirmation_required",
        "message": "faq wants to run book",
        "tool_call_id": "call_2",
        "metadata": {"tool": "book", "agent": "faq"},
    }
    out = await translate(run_events(events.run_interrupted("t", "r", [interrupt])))
    suspended, finished = out[-2:]
    started = next(e for e in out if e.type == "SUBAGENT_STARTED")
    assert suspended.outcome.type == "suspended" and suspended.outcome.interrupt_ids == ["int_1"]
    assert finished.outcome.interrupts[0].subagent_run_id == started.subagent_run_id


async def test_a_failed_run_closes_the_sub_agent_with_an_error_first() -> None:
    sequence = [*run_events(events.run_finished("t", "r"))[:-2], events.run_error("boom", "X")]
    out = await translate(sequence)
    assert [e.type for e in out][-2:] == ["SUBAGENT_ERROR", "RUN_ERROR"]


async def test_a_run_without_handoffs_passes_through_unchanged() -> None:
    sequence = [
        events.run_started("t", "r"),
        events.step_started("faq"),
        events.text_start("m1", "faq"),
        events.text_end("m1"),
        events.step_finished("faq"),
        events.run_finished("t", "r"),
    ]
    assert await translate(sequence) == sequence


def test_a_handoff_targets_messages_stay_in_the_conversation_a_sub_runs_do_not() -> None:
    from ag_ui.core import AssistantMessage, UserMessage

    from network.agui.messages import convert
    from network.run.subrun import new_subrun_id

    sent = [
        UserMessage(id="u1", role="user", content="How many bags?"),
        AssistantMessage(
            id="a1", role="assistant", content="Looked up.", subagent_run_id=new_subrun_id()
        ),
        AssistantMessage(id="a2", role="assistant", content="Two bags.", subagent_run_id="sub_1"),
    ]
    assert [m.id for m in convert(sent)] == ["u1", "a2"]
