"""`network.utf8`: the one test for text with no UTF-8 form (a lone surrogate)."""

from __future__ import annotations

import pytest

from network.utf8 import LONE_SURROGATE, has_utf8_form, lone_surrogate_at


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("plain", None),
        ("", None),
        ("café \U0001f600", None),  # a pair is one code point: it has a UTF-8 form
        ("\ud800", 0),
        ("ab\udfff", 2),
        ("é\udc00\ud800", 1),  # the first one
    ],
)
def test_a_lone_surrogate_is_found_where_it_is(text: str, at: int | None) -> None:
    assert lone_surrogate_at(text) == at
    assert has_utf8_form(text) is (at is None)
    found = LONE_SURROGATE.search(text)
    assert (found.start() if found else None) == at


def test_a_mended_copy_leaves_the_value_as_it_was() -> None:
    from network.utf8 import utf8_copy

    value = {"k\ud800": ["v\udfff", ("t\udc00", 1)], "n": None, "ok": "café"}
    assert utf8_copy(value) == {"k\ufffd": ["v\ufffd", ["t\ufffd", 1]], "n": None, "ok": "café"}
    assert value == {"k\ud800": ["v\udfff", ("t\udc00", 1)], "n": None, "ok": "café"}
    assert utf8_copy("a\ud800") == "a\ufffd" and utf8_copy(3) == 3
