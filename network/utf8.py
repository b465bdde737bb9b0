"""Text with a UTF-8 form: what every thread store, database driver and wire needs.

A Python `str` may hold a lone surrogate (U+D800 to U+DFFF: JSON may spell half of a pair on
its own, `"\\ud800"`, and `json.loads` keeps it); it is the only character with no UTF-8 form.
The library's checks of text from outside (a run's input, state keys, messages, memory
values, ids) and the models' mending of answers find it here, one way; `utf8_text`,
`utf8_json` and `utf8_copy` mend it (each lone surrogate becomes U+FFFD, as a UTF-8 decoder
replaces bytes that are no character), for the models' answers and for what a store or a wire
encodes when its text has no UTF-8 form.
"""

from __future__ import annotations

import base64
import re
from typing import Any

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


REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes when text is mended (U+FFFD, the replacement character)."""

NO_UTF8_FORM = "surrogates not allowed"
"""The reason a `UnicodeEncodeError` gives for a lone surrogate, which pydantic's
serialization error quotes: how an encoder tells that failure from any other."""


INVALID_UTF8 = "invalid utf-8 sequence"
"""What pydantic's serialization error says of bytes that are not UTF-8 (it writes bytes as
their text): how an encoder tells that failure from any other."""

BYTES = (bytes, bytearray, memoryview)
"""The byte sequences `bytes_text` reads (a `memoryview` as the bytes it shows)."""


def bytes_text(value: bytes | bytearray | memoryview) -> str | dict[str, str]:
    """Bytes in JSON, one rule for the model and the stores: their text when they are UTF-8
    (what pydantic writes too), else `{"base64": ...}`, a JSON object that says how to read
    them. Before, a tool's bytes reached the model as their repr and failed a thread's
    commit when they were not UTF-8."""
    data = bytes(value)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def unencodable(error: Exception) -> bool:
    """Whether an encoder's `error` (pydantic's serialization error) is text with no UTF-8
    form: a lone surrogate, or bytes that are not UTF-8. `utf8_copy` mends both."""
    said = str(error)
    return NO_UTF8_FORM in said or INVALID_UTF8 in said


def utf8_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (ASCII text costs one scan)."""
    if text.isascii():
        return text
    return LONE_SURROGATE.sub(REPLACEMENT, text)


def utf8_json(value: Any) -> Any:
    """Parsed JSON with every string (object keys too) made `utf8_text`, in place where it can
    be; walked without recursion (a parser's own depth limit is no promise here)."""
    if isinstance(value, str):
        return utf8_text(value)
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            for key in list(item):
                inner = item[key]
                if isinstance(inner, str):
                    inner = utf8_text(inner)
                elif isinstance(inner, dict | list):
                    pending.append(inner)
                fixed = utf8_text(key) if isinstance(key, str) else key
                if fixed is not key:
                    del item[key]
                item[fixed] = inner
        elif isinstance(item, list):
            for index, inner in enumerate(item):
                if isinstance(inner, str):
                    item[index] = utf8_text(inner)
                elif isinstance(inner, dict | list):
                    pending.append(inner)
    return value


def utf8_copy(value: Any) -> Any:
    """A copy of `value` whose strings (dict keys too) are `utf8_text` and whose bytes are
    `bytes_text`, for an encoder whose first try met a lone surrogate or bytes that are not
    UTF-8: dicts, lists and tuples are copied (a tuple as a list, as JSON writes it),
    everything else kept as it is; `value` itself is left untouched (it may be a run's live
    state). Walked without recursion, as `utf8_json`."""
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, BYTES):
        return bytes_text(value)
    top: list[Any] = [value]
    pending: list[tuple[Any, Any, Any]] = [(value, top, 0)]
    while pending:
        item, parent, slot = pending.pop()
        if isinstance(item, dict):
            copied: Any = {}
            for key, inner in item.items():
                fixed = utf8_text(key) if isinstance(key, str) else key
                copied[fixed] = inner
                if isinstance(inner, str):
                    copied[fixed] = utf8_text(inner)
                elif isinstance(inner, BYTES):
                    copied[fixed] = bytes_text(inner)
                elif isinstance(inner, dict | list | tuple):
                    pending.append((inner, copied, fixed))
        elif isinstance(item, list | tuple):
            copied = list(item)
            for index, inner in enumerate(copied):
                if isinstance(inner, str):
                    copied[index] = utf8_text(inner)
                elif isinstance(inner, BYTES):
                    copied[index] = bytes_text(inner)
                elif isinstance(inner, dict | list | tuple):
                    pending.append((inner, copied, index))
        else:
            copied = item
        parent[slot] = copied
    return top[0]
