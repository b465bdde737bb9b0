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
    return events.handoff(source, target, call_id)


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


# -- with real handoffs, over the wire (the pinned @ag-ui/client) ------------------------------


def airline() -> Any:
    from agents import Agent as RealAgent
    from agents import ScriptedModel, call
    from network import Network

    faq = RealAgent(
        "faq",
        description="Answers questions about bags.",
        model=ScriptedModel(lambda request: "You may bring two bags."),
    )
    triage = RealAgent(
        "triage",
        model=ScriptedModel(lambda request: call("transfer_to_faq", reason="bags")),
        handoffs=[faq],
    )
    return Network("airline", agents=[triage, faq])


@pytest.mark.parametrize("stored", [False, True])
def test_the_client_sees_the_handoff_targets_work_as_a_sub_agent(
    tmp_path: Any, stored: bool
) -> None:
    from network.agui import app
    from tests.network.agui.live import serve
    from tests.network.agui.subagent_client import attributed, drive

    served = app(airline(), store=str(tmp_path / "t.db") if stored else None)
    with serve(served) as url:
        (run,) = drive(url, "airline-thread", ["How many bags may I bring?"])["runs"]
    (started,) = [e for e in run["events"] if e["type"] == "SUBAGENT_STARTED"]
    assert started["name"] == "faq"
    transfer = next(e for e in run["events"] if e.get("toolCallName") == "transfer_to_faq")
    assert started["parentToolCallId"] == transfer["toolCallId"]
    assert "subagentRunId" not in transfer  # triage's own
    work = attributed(run)[started["subagentRunId"]]
    assert [e["type"] for e in work][:2] == ["STEP_STARTED", "TEXT_MESSAGE_START"]
    types = [e["type"] for e in run["events"]]
    assert types[-2:] == ["SUBAGENT_FINISHED", "RUN_FINISHED"]
    answer = next(m for m in run["messages"] if m.get("content") == "You may bring two bags.")
    assert answer["subagentRunId"] == started["subagentRunId"]


def test_the_targets_answer_stays_in_the_conversation_on_the_next_turn() -> None:
    from agents import Agent as RealAgent
    from agents import ScriptedModel, call
    from network import Network
    from network.agui import app
    from tests.network.agui.live import serve
    from tests.network.agui.subagent_client import drive

    faq_model = ScriptedModel(lambda request: "You may bring two bags.")
    faq = RealAgent("faq", description="Answers questions about bags.", model=faq_model)
    triage = RealAgent(
        "triage",
        model=ScriptedModel(lambda request: call("transfer_to_faq", reason="bags")),
        handoffs=[faq],
    )
    with serve(app(Network("airline", agents=[triage, faq]))) as url:
        first, _ = drive(url, "turns", ["How many bags?", "And a third one?"])["runs"]
    assert any(e["type"] == "SUBAGENT_STARTED" for e in first["events"])
    # the next turn starts with faq (the active agent), which reads its own earlier answer
    history = faq_model.requests[-1].history
    assert [m.content for m in history if m.role == "assistant" and m.content] == [
        "You may bring two bags."
    ]
