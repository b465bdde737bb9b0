"""Token usage as the server reported it, or estimated (and marked so) when it did not.

Some servers send no usage (llama-cpp-python's, when streaming). A run's token totals should
still mean something, so the client estimates, at about four characters a token, and sets
`Usage.estimated`: a reader can tell a server's figure from a guess.
"""

from __future__ import annotations

import json
from typing import Any

from network.history.messages import AssistantMessage
from network.history.results import Usage


def reported_usage(usage: Any) -> Usage | None:
    """The server's counts from a usage dict or object, or None when it gave none."""
    if usage is None:
        return None
    get = usage.get if isinstance(usage, dict) else lambda name: getattr(usage, name, None)
    prompt, completion, total = get("prompt_tokens"), get("completion_tokens"), get("total_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    details = get("prompt_tokens_details")  # OpenAI's cached prompt tokens live here
    if isinstance(details, dict):
        cached = details.get("cached_tokens")
    else:
        cached = getattr(details, "cached_tokens", None)
    return Usage(
        prompt,
        completion,
        total if isinstance(total, int) else prompt + completion,
        cached_tokens=cached if isinstance(cached, int) else 0,
    )


def estimated_usage(prompt_chars: int, message: AssistantMessage) -> Usage:
    """About four characters a token, for the request sent and the answer received."""
    answer = len(message.content or "") + sum(
        len(call.name)
        + len(call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments))
        for call in message.tool_calls
    )
    prompt, completion = prompt_chars // 4 + 1, answer // 4 + 1
    return Usage(prompt, completion, prompt + completion, True)
