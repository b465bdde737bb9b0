"""A tool call's arguments as an A2A progress message shows them (`network.a2a.message_out`)."""

from __future__ import annotations

from network.a2a.message_out import _arguments


def test_arguments_nested_past_the_recursion_limit_are_shown_as_sent() -> None:
    # A model's arguments are streamed text; nested deeper than Python's JSON reader follows,
    # they ended the task's progress with a RecursionError instead of being shown as text.
    nested = "[" * 5000 + "]" * 5000
    assert _arguments(nested) == nested
    assert _arguments('{"q": "owls"}') == {"q": "owls"}
    assert _arguments("not json") == "not json"
