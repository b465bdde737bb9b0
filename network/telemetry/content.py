"""Content attributes (opt-in): messages, tool arguments and results, state values.

Recorded only when `Telemetry.captures_content()` says so. Messages take the conventions'
JSON shape (`[{"role", "parts": [{"type": "text", "content"}, ...]}]`). The application's
`redact` hook may change or drop each attribute first; then, in what is left, every text of a
`temp:` key's value in the run's state (and in its branches' and sub-runs' states:
`network.run.temp_sources`) is replaced by `[temp:<key>]` (such a value may have been rendered
into instructions or passed as a tool argument), by `network.state.temp_masks`,
which the run's log lines use too (inside the strings of a value, never in its JSON text).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from network.logger import get_logger
from network.state.scopes import TEMP_PREFIX
from network.state.temp_masks import Masks, masked
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

    def __init__(self, masks: Callable[[], Masks], redact: Redactor | None) -> None:
        self.masks = masks  # the run's temp: texts (`network.run.temp_sources.run_masks`)
        self.redact = redact
        self._failed: set[str] = set()  # attributes whose redact failure was logged

    def attribute(self, name: str, value: Any) -> str | None:
        """The attribute's text, redacted and `temp:` texts masked; None to leave it out."""
        if self.redact is not None:
            try:
                value = self.redact(name, value)
            except Exception as error:
                # The value was to be redacted: leave it out rather than record it as it was,
                # and go on writing the span (an error here lost the whole agent call's spans).
                self._redact_failed(name, error)
                return None
            if value is None:
                return None
        masks = self.masks()
        if masks:
            if not isinstance(value, str):  # JSON's own types, so every text is a string
                text = _text(value)
                try:
                    value = json.loads(text)
                except ValueError:  # not JSON (`str(value)`): a text like any other
                    value = text
            value = masked(value, masks)
        return _text(value)

    def _redact_failed(self, name: str, error: Exception) -> None:
        """Log the application's failing hook, once per attribute name and run."""
        if name not in self._failed:
            self._failed.add(name)
            get_logger().warning("telemetry.failed", attribute=name, error=repr(error))

    def set(self, span: Any, name: str, value: Any) -> None:
        """Set a content attribute on `span` unless the hook dropped it."""
        text = self.attribute(name, value)
        if text is not None:
            span.set_attribute(name, text)


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
