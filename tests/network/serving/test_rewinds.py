"""`network.serving.rewinds.rewind_point`: when a client's messages say it went back in the
stored conversation (the HTTP flows are in tests/network/agui/test_rewinds.py)."""

from __future__ import annotations

from network.history.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from network.serving.rewinds import rewind_point, rewound_id

CALL = ToolCall("call_1", "slow", {})
STORED = [
    UserMessage("go", id="u1"),
    AssistantMessage(None, tool_calls=[CALL], id="a1"),
    ToolMessage("call_1", "cancelled", id="call_1:result"),
    AssistantMessage("stopped", id="a2"),
]


def test_a_cut_before_a_tool_result_or_a_reordered_copy_moves_nothing_back() -> None:
    stored, call = STORED, CALL
    # a stopped run: the client never received the call's result; its next message continues
    stopped = [UserMessage("go", id="u1"), AssistantMessage(None, tool_calls=[call], id="a1")]
    assert rewind_point(stored, [*stopped, UserMessage("again", id="u2")]) is None
    # a client that sends the user's messages only holds the thread's elsewhere: no cut
    assert rewind_point(stored, [UserMessage("go", id="u1"), UserMessage("go", id="u1")]) is None
    # the answer left out after the tool's result: a regenerate
    assert rewind_point(stored, stored[:3]) == 3


def test_an_edit_keeping_its_id_is_a_cut_and_a_user_message_with_other_text_is_not_held() -> None:
    edited = UserMessage("went", id="u1")
    assert rewind_point(STORED, [edited]) is None  # nothing kept: before the first answer
    answered = [*STORED, UserMessage("next", id="u2"), AssistantMessage("done", id="a3")]
    assert rewind_point(answered, [*STORED, UserMessage("later", id="u2")]) == 4
    assert rewind_point(answered, answered) is None
    assert rewind_point(answered, [UserMessage("new", id="u9")]) is None


def test_the_kept_thread_is_named_after_the_thread_or_random_when_too_long() -> None:
    assert rewound_id("trip").startswith("trip~rewound-")
    assert rewound_id("x" * 256).startswith("rewound-")
