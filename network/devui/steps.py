"""One agent call (`InferenceResult`) as the page shows it: prompt, answer, tools, usage.

The same shape serves a live run (sent as a CUSTOM event after each step) and a stored
thread's replay (`GET /api/threads/{id}`), so the page draws both with the same code. Texts
are cut to `bounded.MAX_TEXT`; a stored step also carries its state delta (RFC 6902), which a
live step does not need (the page already received it as STATE_DELTA events).
"""

from __future__ import annotations

import json
from typing import Any

from network.devui.bounded import cut
from network.history.results import InferenceResult


def _text_of(message: Any) -> str:
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return "\n".join(str(getattr(part, "text", "")) for part in content)


def _arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return cut(arguments)
    try:
        return cut(json.dumps(arguments, default=str))
    except ValueError:  # a circular structure: shown as Python sees it
        return cut(repr(arguments))


def step_view(result: InferenceResult, index: int) -> dict[str, Any]:
    """The page's view of agent call number `index`."""
    usage = result.usage
    return {
        "index": index,
        "agent": result.agent,
        "input": cut(result.input),
        "prompt": cut("\n\n".join(_text_of(message) for message in result.prompt)),
        "answer": cut(result.text or ""),
        "tool_calls": [
            {
                "id": call.id,
                "name": call.name,
                "arguments": _arguments(call.arguments),
                "content": cut(call.content),
                "is_error": call.is_error,
                "duration_ms": round(call.duration_ms, 3),
            }
            for call in result.tool_calls
        ],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
        "duration_ms": round(result.duration_ms, 3),
        "started_at": result.started_at,
        "skipped": result.skipped,
    }


def key_of(path: str) -> str:
    """The state key an RFC 6902 path (`/files/a~1b.py`) starts with (`files`)."""
    return path[1:].split("/", 1)[0].replace("~1", "/").replace("~0", "~")
