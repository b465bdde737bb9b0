"""`network.state.temp_masks`: the texts of `temp:` values, masked inside strings only."""

from __future__ import annotations

from network.state.state import State
from network.state.temp_masks import masked, masked_text, temp_texts


def test_texts_of_temp_values_are_masked_inside_strings_longest_first() -> None:
    state = State({"temp:lang": "en", "temp:names": ["Ann", "Annabel"], "kept": "en"})
    masks = temp_texts(state.kv)
    assert masks == [
        ("Annabel", "[temp:names]"),
        ("Ann", "[temp:names]"),
        ("en", "[temp:lang]"),
    ]
    assert masked_text("Annabel speaks en", state.kv) == "[temp:names] speaks [temp:lang]"
    # JSON sent as text is scrubbed inside, its keys (structure) left alone
    assert masked('{"content": "en"}', masks) == '{"content": "[temp:lang]"}'
    assert masked({"content": ["en", 5]}, masks) == {"content": ["[temp:lang]", 5]}
    assert masked_text("nothing to hide", State({"x": "en"}).kv) == "nothing to hide"
