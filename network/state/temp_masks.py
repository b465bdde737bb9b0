"""`temp:` values masked in what leaves a run: telemetry's content attributes and its logs.

A `temp:` key is never persisted (`network.state.scopes`), yet its value may travel into text
that does leave the run: rendered into instructions, passed as a tool argument, quoted by an
error. What is written out (a span's attribute or status, the `run.failed` log line) has every
text of a `temp:` value replaced by `[temp:<key>]`.

The replacement is made inside the strings of a value, never in its JSON text: a `temp:` value
of `"en"` must not turn the key `"content"` into `"cont[temp:lang]t"`. A string that is itself
a JSON object or array (tool arguments as the model sent them) is scrubbed the same way inside
and written back as JSON. Only texts are masked: the strings of a `temp:` value (a string, or
the strings inside a list or dict); numbers and booleans are left alone, since masking `5`
would corrupt every number with a 5 in it. Object keys are structure, not masked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence, Set
from typing import Any

from network.state.scopes import TEMP_PREFIX

Masks = list[tuple[str, str]]


def temp_texts(kv: Any) -> Masks:
    """`(text, "[temp:key]")` for every text in a `temp:` key's value of `kv`, longest first
    (so that no text is replaced in part by a shorter one)."""
    found: Masks = []
    for key in kv.keys():
        if key.startswith(TEMP_PREFIX):
            found.extend((text, f"[{key}]") for text in _strings(kv.view(key)) if text)
    found.sort(key=lambda pair: -len(pair[0]))
    return found


def masked_text(text: str, kv: Any) -> str:
    """`text` with every text of `kv`'s `temp:` values masked (as it is when there is none)."""
    masks = temp_texts(kv)
    return masked(text, masks) if masks else text


def masked(value: Any, masks: Masks) -> Any:
    """`value` with each text of `masks` replaced inside its strings (keys left alone)."""
    if isinstance(value, str):
        parsed = _json_container(value)
        if parsed is not None:  # JSON sent as text (tool arguments): scrub inside, keep JSON
            scrubbed = masked(parsed, masks)
            return value if scrubbed == parsed else json.dumps(scrubbed)
        for text, marker in masks:
            value = value.replace(text, marker)
        return value
    if isinstance(value, dict):
        return {key: masked(item, masks) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [masked(item, masks) for item in value]
    return value


def _strings(value: Any) -> list[str]:
    """The texts in a value: itself when a string, else the strings inside its lists and dict
    values (not its keys, numbers or booleans)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):  # `kv.view` gives a read-only mapping for a dict
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, Sequence | Set) and not isinstance(value, bytes | bytearray):
        return [text for item in value for text in _strings(item)]  # and a `ListView`
    return []


def _json_container(text: str) -> Any:
    """The object or array `text` holds as JSON, or None when it holds none."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        parsed = json.loads(stripped)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict | list) else None
