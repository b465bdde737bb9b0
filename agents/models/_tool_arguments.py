"""A tool call's arguments as the model sent them, read the same way by both clients."""

from __future__ import annotations

import json
from typing import Any

from agents.models._text import utf8_json, utf8_text


def parse_arguments(arguments: Any) -> Any:
    """A tool call's arguments as a dict, when they are a JSON object.

    Anything else stays as it came (text that is not a JSON object, a number, a list), so the
    tool tells the model its arguments must be a JSON object instead of running without them;
    no arguments at all (None, or "" from a tool without parameters on some servers) are {}.
    """
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        # a lone surrogate, sent as a character or as a `\ud800` escape inside the text,
        # becomes U+FFFD (`agents.models._text`): only text that may hold one is walked
        suspect = not arguments.isascii() or "\\u" in arguments
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):  # RecursionError: nested past Python's stack
            return utf8_text(arguments)
        if not isinstance(parsed, dict):
            return utf8_text(arguments)
        return utf8_json(parsed) if suspect else parsed
    return {} if arguments is None else arguments
