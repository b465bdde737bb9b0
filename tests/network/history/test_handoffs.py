"""`HandoffRecord` and `active_agent`: who has the conversation, read from the agent calls."""

from __future__ import annotations

from network.history.handoffs import HandoffRecord, active_agent
from network.history.results import InferenceResult


def test_the_active_agent_is_the_last_handoffs_target_else_the_last_agent_called() -> None:
    assert active_agent([]) is None
    triage = InferenceResult("triage", handoff=HandoffRecord("triage", "faq", "bags", "c1"))
    assert active_agent([triage]) == "faq"  # handed off, even before faq ran
    faq = InferenceResult("faq")
    assert active_agent([triage, faq]) == "faq"
    assert active_agent([triage, faq, InferenceResult("billing")]) == "billing"
    # a fan-out's branches are passed over: none of them has the conversation
    branches = [InferenceResult("a", branch="f/a"), InferenceResult("b", branch="f/b")]
    assert active_agent([triage, *branches]) == "faq"


def test_a_result_keeps_its_handoff_through_json() -> None:
    made = HandoffRecord("triage", "faq", "a question about bags", "call_1")
    result = InferenceResult("triage", handoff=made)

    again = InferenceResult.from_json(result.to_json())

    assert again.handoff == made
    assert InferenceResult.from_json(InferenceResult("faq").to_json()).handoff is None
