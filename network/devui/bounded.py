"""Bounding what the dev server sends the page: long texts are cut, saying by how much."""

from __future__ import annotations

from typing import Any

MAX_TEXT = 20_000  # characters of one prompt, answer or tool result shown on the page


def cut(text: Any, limit: int = MAX_TEXT) -> str:
    """`text` as a string of at most `limit` characters (plus a note of what was cut)."""
    value = text if isinstance(text, str) else str(text)
    if len(value) <= limit:
        return value
    return value[:limit] + f"... [{len(value) - limit} more characters]"
