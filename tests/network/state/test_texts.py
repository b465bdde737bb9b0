"""Text in state has a UTF-8 form: a lone surrogate is refused when written, in any key."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from network import State, StateValidationError
from network.state.texts import may_hold_text, text_problem, utf8_text_type


class Note(BaseModel):
    title: str


LONE = "\ud800"  # half of a surrogate pair: no UTF-8 form (`os.fsdecode` of a non-UTF-8 name)


@pytest.mark.parametrize(
    ("tp", "value"),
    [
        (None, LONE),
        (None, {"a": [1, "fine", f"x{LONE}"]}),
        (None, {f"name{LONE}": 1}),  # a dict key
        (Any, LONE),
        (list, ["a", LONE]),
        (str, f"file-{LONE}.txt"),
        (list[str], ["a.txt", LONE]),
        (dict[str, str], {"a": LONE}),
        (dict[str, int], {LONE: 1}),
        (str | None, LONE),
        (Note, Note(title=LONE)),
        (list[Note], [{"title": LONE}]),
    ],
    ids=lambda v: repr(v)[:30],
)
def test_text_without_a_utf8_form_is_refused_when_written(tp: Any, value: Any) -> None:
    # It was stored, and the thread store refused the whole run at its commit (ThreadError:
    # "cannot be stored as JSON"), far from the write; no store, driver or client takes it.
    schema = {} if tp is None else {"k": {"type": tp}}
    state = State({"before": "é 😀"}, schema=schema)  # text with a UTF-8 form is fine
    with pytest.raises(StateValidationError, match="'k'") as raised:
        state.kv.set("k", value)
    assert raised.value.key == "k"
    assert "surrogate" in str(raised.value)
    str(raised.value).encode("utf-8")  # the message itself has a UTF-8 form: it can be logged
    assert state.kv.data == {"before": "é 😀"}
    with pytest.raises(StateValidationError, match="surrogate"):
        State({"k": value}, schema=schema)  # initial data too


def test_text_with_a_utf8_form_is_stored_in_every_kind_of_key() -> None:
    schema = {"s": {"type": str}, "l": {"type": list[str]}, "d": {"type": dict[str, str]}}
    state = State(schema=schema)
    for key in ("s", "u"):
        state.kv.set(key, "naïve 😀 \u00a0")
    state.kv.set("l", ["😀"])
    state.kv.set("d", {"ключ": "значение"})
    assert State.from_json(state.to_json()).kv.data == state.kv.data


def test_what_may_hold_text_and_what_is_wrong_with_it() -> None:
    assert text_problem("plain ascii") is None and text_problem("😀 é") is None
    assert "character 2" in (text_problem(f"ab{LONE}") or "")
    assert may_hold_text(list[str]) and may_hold_text(dict[str, int]) and may_hold_text(list)
    assert not may_hold_text(int) and not may_hold_text(list[float]) and not may_hold_text(bytes)


def test_plain_types_are_checked_in_pydantic_s_core_and_the_others_by_a_walk() -> None:
    # a `str` made a pattern-constrained string: pydantic's core reads it as UTF-8, with no
    # Python call per write (the benchmark's `list[str]` append); None: `texts_have_utf8`
    for tp in (str, list[str], dict[str, int], tuple[int, str], str | None, set[str]):
        assert utf8_text_type(tp) is not None
    assert utf8_text_type(int) is int
    for tp in (list, dict[str, Any], Note, list[Note]):
        assert utf8_text_type(tp) is None
