"""How a replay shows a request: conversations as readable blocks, diffs bounded."""

from __future__ import annotations

from network import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from network.capabilities.replay.compare import (
    MAX_DIFF_LINES,
    compare_request,
    conversation_lines,
    routing_difference,
    unified,
)


def test_a_conversation_is_shown_by_role_author_text_and_tool_calls_without_ids() -> None:
    history = [
        UserMessage("Write add.", id="u1"),
        AssistantMessage(
            "Saving.\nNow.",
            [ToolCall("call_9", "save", {"files": {"a.py": "x"}})],
            id="m1",
            name="coder",
            reasoning="hidden",
        ),
        ToolMessage("call_9", "saved a.py", name="save"),
        ToolMessage("call_8", "boom", name="save", is_error=True),
    ]
    assert conversation_lines(history) == [
        "[user] Write add.",
        "[assistant coder] Saving.",
        "    Now.",
        '    -> save({"files": {"a.py": "x"}})',
        "[tool save] saved a.py",
        "[tool save error] boom",
    ]


def test_ids_and_reasoning_never_make_a_difference() -> None:
    one = [AssistantMessage("hi", id="a", name="x", reasoning="r1")]
    two = [AssistantMessage("hi", id="b", name="x", reasoning="r2")]
    assert compare_request([SystemMessage("s")], one, [], [SystemMessage("s")], two, []) == []


def test_a_diff_is_cut_and_says_how_much_was_left_out() -> None:
    diff = unified([f"old {n}" for n in range(1000)], [f"new {n}" for n in range(1000)])
    lines = diff.splitlines()
    assert len(lines) == MAX_DIFF_LINES + 1
    assert lines[-1].startswith("... (") and "more lines of diff" in lines[-1]
    long = unified(["x" * 10_000], ["y"])
    assert "(10000 characters)" in long


def test_a_router_ending_early_is_said_in_words() -> None:
    difference = routing_difference(["coder"], [])
    assert difference is not None
    assert difference.summary == (
        "the recording called coder; today's router calls nothing (the run ends)"
    )
    assert routing_difference(["a"], ["a"]) is None
