"""The thread remembers which agent has the conversation: after a handoff, the next turn (a
new run, a new network object, a new store object on the same database) starts with it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agents import call
from network import ThreadRef
from network.history.handoffs import HandoffRecord
from network.threads import ThreadStore
from tests.agents.airline import team

pytestmark = pytest.mark.anyio


async def test_the_next_turn_starts_with_the_agent_a_handoff_left_the_conversation_with(
    open_store: Callable[[], ThreadStore],
) -> None:
    first_process, _triage, _faq, _ = team(
        [call("transfer_to_faq_agent", reason="bags")], ["Two bags."]
    )
    thread = ThreadRef("conversation-1", user_id="ada", store=open_store())

    first = await first_process.run("How many bags?", thread=thread)
    assert [r.agent for r in first.results] == ["triage", "FAQ Agent"]

    # another process: its own network and its own connection to the same database
    second_process, triage2, faq2, booking2 = team(
        ["triage must not be asked"], ["Wifi is free on board."], ["never"]
    )
    store = open_store()
    stored = await store.get_thread("conversation-1")
    assert stored is not None and stored.active_agent == "FAQ Agent"
    assert stored.results[0].handoff == HandoffRecord(
        "triage", "FAQ Agent", "bags", first.results[0].tool_calls[0].id
    )

    second = await second_process.run(
        "And wifi?", thread=ThreadRef("conversation-1", user_id="ada", store=store)
    )

    # (a thread run's results are the thread's: the first turn's two calls, then this one)
    assert [r.agent for r in second.results] == ["triage", "FAQ Agent", "FAQ Agent"]
    assert second.output == "Wifi is free on board."
    assert triage2.model.requests == [] and booking2.model.requests == []
    # the FAQ agent is sent the whole conversation, the first turn's handoff included (as
    # triage's turns, shown as context), and its own earlier answer as its own
    (request,) = faq2.model.requests
    assert [m.role for m in request.history] == ["user", "user", "user", "assistant", "user"]


async def test_a_handoff_back_makes_the_source_active_again_for_the_turn_after(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    thread = ThreadRef("conversation-2", store=store)
    network, *_ = team(
        [call("transfer_to_seat_booking"), "What else can I do for you?"],
        booking_script=[call("transfer_to_triage", reason="not a seat question")],
    )
    first = await network.run("Is there wifi?", thread=thread)
    assert [r.agent for r in first.results] == ["triage", "seat_booking", "triage"]
    stored = await store.get_thread("conversation-2")
    assert stored is not None and stored.active_agent == "triage"

    network, triage, *_ = team(["Next turn at triage."])
    result = await network.run("Hello again", thread=thread)
    assert [r.agent for r in result.results[3:]] == ["triage"]
    assert len(triage.model.requests) == 1


async def test_a_new_thread_starts_with_the_first_agent(
    open_store: Callable[[], ThreadStore],
) -> None:
    network, _triage, faq, _ = team(["Hello, how can I help?"])
    result = await network.run("Hi", thread=ThreadRef("conversation-3", store=open_store()))
    assert [r.agent for r in result.results] == ["triage"] and faq.model.requests == []
