"""Content attributes (opt-in): messages, tool arguments and results, state values.

Recorded only when `Telemetry.captures_content()` says so. Messages take the conventions'
JSON shape (`[{"role", "parts": [{"type": "text", "content"}, ...]}]`). The application's
`redact` hook may change or drop each attribute first; then, in what is left, every text of a
`temp:` key's value in the run's state is replaced by `[temp:<key>]` (such a value may have
been rendered into instructions or passed as a tool argument).

The replacement is made inside the strings of the value, before it is written as JSON, never
in the JSON text: a `temp:` value of `"en"` must not turn the key `"content"` into
`"cont[temp:lang]t"`. A string that is itself a JSON object or array (tool arguments as the
model sent them) is scrubbed the same way inside and written back as JSON. Only texts are
masked: the strings of a `temp:` value (a string, or the strings inside a list or dict);
numbers and booleans are left alone, since masking `5` would corrupt every number with a 5
in it. Object keys are structure (the conventions' field names, parameter names), not masked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from network.state.scopes import TEMP_PREFIX
from network.telemetry.options import Redactor


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError):
        return str(value)


class ContentRecorder:
    """Formats, scrubs and redacts content attributes of one run."""

    def __init__(self, kv: Any, redact: Redactor | None) -> None:
        self.kv = kv
        self.redact = redact

    def _temp_texts(self) -> list[tuple[str, str]]:
        """`(text, "[temp:key]")` for every text in a `temp:` key's value, longest first."""
        kv = self.kv
        found: list[tuple[str, str]] = []
        for key in kv.keys():
            if key.startswith(TEMP_PREFIX):
                found.extend((text, f"[{key}]") for text in _strings(kv.view(key)) if text)
        found.sort(key=lambda pair: -len(pair[0]))  # longest first: no partial replacement
        return found

    def attribute(self, name: str, value: Any) -> str | None:
        """The attribute's text, redacted and `temp:` texts masked; None to leave it out."""
        if self.redact is not None:
            value = self.redact(name, value)
            if value is None:
                return None
        masks = self._temp_texts()
        if masks:
            if not isinstance(value, str):  # JSON's own types, so every text is a string
                text = _text(value)
                try:
                    value = json.loads(text)
                except ValueError:  # not JSON (`str(value)`): a text like any other
                    value = text
            value = _masked(value, masks)
        return _text(value)

    def set(self, span: Any, name: str, value: Any) -> None:
        """Set a content attribute on `span` unless the hook dropped it."""
        text = self.attribute(name, value)
        if text is not None:
            span.set_attribute(name, text)


def _strings(value: Any) -> list[str]:
    """The texts in a value: itself when a string, else the strings inside its lists and dict
    values (not its keys, numbers or booleans)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list | tuple | set | frozenset):
        return [text for item in value for text in _strings(item)]
    return []


def _masked(value: Any, masks: list[tuple[str, str]]) -> Any:
    """`value` with each text of `masks` replaced inside its strings (keys left alone)."""
    if isinstance(value, str):
        parsed = _json_container(value)
        if parsed is not None:  # JSON sent as text (tool arguments): scrub inside, keep JSON
            scrubbed = _masked(parsed, masks)
            return value if scrubbed == parsed else json.dumps(scrubbed)
        for text, marker in masks:
            value = value.replace(text, marker)
        return value
    if isinstance(value, dict):
        return {key: _masked(item, masks) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(item, masks) for item in value]
    return value


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


def messages(items: Iterable[Any]) -> list[dict[str, Any]]:
    """Messages in the conventions' shape."""
    out = []
    for message in items:
        role = getattr(message, "role", "user")
        parts: list[dict[str, Any]] = []
        if role == "tool":
            parts.append(
                {
                    "type": "tool_call_response",
                    "id": message.tool_call_id,
                    "response": message.content,
                }
            )
        else:
            if getattr(message, "content", None):
                parts.append({"type": "text", "content": message.content})
            for call in getattr(message, "tool_calls", None) or ():
                parts.append(
                    {
                        "type": "tool_call",
                        "id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                    }
                )
        out.append({"role": role, "parts": parts})
    return out


def system_instructions(prompt: Iterable[Any]) -> list[dict[str, Any]]:
    """System messages as the conventions' instruction parts."""
    return [{"type": "text", "content": message.content} for message in prompt]


def state_values(kv: Any, keys: Iterable[str]) -> dict[str, Any]:
    """`{key: value}` of the keys a step wrote, as they are after it (never `temp:` keys)."""
    return {
        key: kv.spec(key).to_json(kv.raw(key))
        for key in keys
        if not key.startswith(TEMP_PREFIX) and kv.has(key)
    }


def key_of(path: str) -> str:
    """The top-level state key of an RFC 6901 pointer (`/files/a~1b` -> `files`)."""
    head = path[1:].split("/", 1)[0]
    return head.replace("~1", "/").replace("~0", "~")
