"""Text from a run shown on a terminal as text: escapes for what would drive the terminal."""

from __future__ import annotations

from network.cli.visible import visible


def test_control_characters_bidi_controls_and_lone_surrogates_are_shown_as_escapes() -> None:
    assert visible("a\x1b[2Jb\x00\x7f\x9b") == "a\\x1b[2Jb\\x00\\x7f\\x9b"
    assert visible("\u202eevil\u2066\u200f") == "\\u202eevil\\u2066\\u200f"
    assert visible("name-\udcff") == "name-\\udcff"


def test_text_and_the_characters_kept_pass_as_they_are() -> None:
    text = "héllo 世界 👩‍💻 \u200d"  # a zero-width joiner builds emoji: not a control
    assert visible(text) == text
    assert visible("one\ntwo\tthree\r") == "one\\x0atwo\\x09three\\x0d"
    assert visible("one\ntwo\tthree\x1b", keep="\n\t") == "one\ntwo\tthree\\x1b"
