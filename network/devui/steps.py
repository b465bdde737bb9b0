"""One agent call (`InferenceResult`) as the page shows it: prompt, answer, tools, usage.

The same shape serves a live run (sent as a CUSTOM event after each step) and a stored
thread's replay (`GET /api/threads/{id}`), so the page draws both with the same code. Texts
are cut to `bounded.MAX_TEXT` (`cut` names the parts that were; `GET /api/value` gives them
whole); a stored step also carries its state delta (RFC 6902), which a
live step does not need (the page already received it as STATE_DELTA events).
"""

from __future__ import annotations

import json
from typing import Any

from network.devui.bounded import MAX_TEXT, cut
from network.history.results import InferenceResult


def _text_of(message: Any) -> str:
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return "\n".join(str(getattr(part, "text", "")) for part in content)


def arguments_text(arguments: Any) -> str:
    """A tool call's arguments as text: the model's JSON as sent, else the value as JSON."""
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, default=str)
    except ValueError:  # a circular structure: shown as Python sees it
        return repr(arguments)


def prompt_text(result: InferenceResult) -> str:
    """The system instructions an agent call sent, as one text."""
    return "\n\n".join(_text_of(message) for message in result.prompt)


def _cut_parts(texts: dict[str, str]) -> list[str]:
    return [name for name, text in texts.items() if len(text) > MAX_TEXT]


def step_view(result: InferenceResult, index: int) -> dict[str, Any]:
    """The page's view of agent call number `index`."""
    usage = result.usage
    texts = {"input": result.input, "prompt": prompt_text(result), "answer": result.text or ""}
    calls = []
    for call in result.tool_calls:
        parts = {"arguments": arguments_text(call.arguments), "result": call.content}
        calls.append(
            {
                "id": call.id,
                "name": call.name,
                "arguments": cut(parts["arguments"]),
                "content": cut(parts["result"]),
                "is_error": call.is_error,
                "duration_ms": round(call.duration_ms, 3),
                "cut": _cut_parts(parts),  # the whole text: `GET /api/value`
            }
        )
    return {
        "index": index,
        "agent": result.agent,
        "input": cut(texts["input"]),
        "prompt": cut(texts["prompt"]),
        "answer": cut(texts["answer"]),
        "cut": _cut_parts(texts),
        "tool_calls": calls,
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
