"""Text with a UTF-8 form: what every thread store, database driver and wire needs.

A Python `str` may hold a lone surrogate (U+D800 to U+DFFF: JSON may spell half of a pair on
its own, `"\\ud800"`, and `json.loads` keeps it); it is the only character with no UTF-8 form.
The library's checks of text from outside (a run's input, state keys, messages, memory
values, ids) and the models' mending of answers find it here, one way.
"""

from __future__ import annotations

import re

SURROGATES = "\ud800-\udfff"
"""The range of lone surrogates, for a character class (`[...]`) of a larger pattern."""

LONE_SURROGATE = re.compile(f"[{SURROGATES}]")
"""One lone surrogate (a pair JSON spells is one code point once parsed)."""


def lone_surrogate_at(text: str) -> int | None:
    """Where the first lone surrogate of `text` is, or None when `text` has a UTF-8 form
    (ASCII text costs one flag test, other text one encode in C)."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def has_utf8_form(text: str) -> bool:
    """Whether `text` can be encoded as UTF-8, as every thread store keeps text."""
    return lone_surrogate_at(text) is None
