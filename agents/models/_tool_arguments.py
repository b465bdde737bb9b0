"""A tool call's arguments as the model sent them, read the same way by both clients."""

from __future__ import annotations

import json
from typing import Any


def parse_arguments(arguments: Any) -> Any:
    """A tool call's arguments as a dict, when they are a JSON object.

    Anything else stays as it came (text that is not a JSON object, a number, a list), so the
    tool tells the model its arguments must be a JSON object instead of running without them;
    no arguments at all (None, or "" from a tool without parameters on some servers) are {}.
    """
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return arguments
        return parsed if isinstance(parsed, dict) else arguments
    return {} if arguments is None else arguments
