"""A request that answers waiting calls and says something new: the answered calls get no
"Not run" result, the new message waits until their results are in, and a result a client
placed after a later message goes back right after its call."""

from __future__ import annotations

from typing import Any

from network.history.answer_order import hold_after_answers, results_after_calls
from network.history.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from network.history.unanswered import answered

ASKED = UserMessage("pancakes", id="u1")
CALLS = AssistantMessage(None, [ToolCall("c1", "save", {}), ToolCall("c2", "show_card", {})])
LATER = UserMessage("also add syrup", id="u2")


def shape(messages: list[Any]) -> list[str]:
    return [
        f"tool:{m.tool_call_id}" if isinstance(m, ToolMessage) else type(m).__name__
        for m in messages
    ]


def test_calls_the_request_answers_get_no_not_run_result_the_others_do() -> None:
    out = answered([ASKED, CALLS, LATER], resolved={"c1"})
    assert shape(out) == ["UserMessage", "AssistantMessage", "tool:c2", "UserMessage"]
    assert out[2].content.startswith("Not run")
    waiting = list(CALLS.tool_calls)  # a store's conversation ends with them
    assert shape(answered([LATER], waiting, resolved={"c1", "c2"})) == ["UserMessage"]


def test_the_messages_after_the_answered_calls_are_held() -> None:
    conversation = answered([ASKED, CALLS, LATER], resolved={"c1"})
    now, held = hold_after_answers(conversation, {"c1"})
    assert shape(now) == ["UserMessage", "AssistantMessage", "tool:c2"]
    assert held == [LATER]
    # a store holds the call: only the request's new messages, results first
    result = ToolMessage("c2", "shown", "show_card")
    assert hold_after_answers([result, LATER], {"c1"}) == ([result], [LATER])
    assert hold_after_answers([ASKED, CALLS], {"c1"}) == ([ASKED, CALLS], [])


def test_a_result_placed_after_a_later_message_goes_back_after_its_call() -> None:
    other = ToolMessage("c2", "shown", "show_card")
    late = ToolMessage("c1", "saved", "save")
    reply = AssistantMessage("noted")
    client = [ASKED, CALLS, other, LATER, late, reply, UserMessage("thanks")]
    assert results_after_calls(client) == [
        ASKED,
        CALLS,
        other,
        late,
        LATER,
        reply,
        client[-1],
    ]
    in_order = [ASKED, CALLS, late, other, LATER, reply]
    assert results_after_calls(in_order) == in_order
    stray = ToolMessage("c9", "?", "unknown")  # no call of its own among the messages
    assert results_after_calls([ASKED, stray, LATER]) == [ASKED, stray, LATER]
    # a result after a later message, its call's block at the very end of the conversation
    assert results_after_calls([CALLS, LATER, late]) == [CALLS, late, LATER]
