"""Token usage as the server reported it, or estimated (and marked so) when it did not.

Some servers send no usage (llama-cpp-python's, when streaming). A run's token totals should
still mean something, so the client estimates, at about four characters a token, and sets
`Usage.estimated`: a reader can tell a server's figure from a guess. A figure that is not a
whole number >= 0 is no figure (estimated too): a negative count would make a request cost
less than nothing and let a run past `max_cost_usd`. Nor is one past `MAX_TOKEN_COUNT` (2**53 - 1):
a count of 10**400 cannot be priced (a float holds no such number) and no AG-UI client can
read one. A cached or reasoning count is part of the prompt or the completion, so it is at
most that.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from network.history.messages import AssistantMessage
from network.history.results import MAX_TOKEN_COUNT, Usage

if TYPE_CHECKING:
    from typing_extensions import TypeIs  # typing's own from 3.13; kept off the import path


def reported_usage(usage: Any) -> Usage | None:
    """The server's counts from a usage dict or object, or None when it gave none."""
    if usage is None:
        return None

    def get(name: str) -> Any:
        return usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)

    prompt, completion, total = get("prompt_tokens"), get("completion_tokens"), get("total_tokens")
    if not _count(prompt) or not _count(completion):
        return None  # a count that is not a whole number >= 0 is no figure: estimate instead
    cached = _detail(get("prompt_tokens_details"), "cached_tokens")  # OpenAI's cache hits
    # A reasoning model's thinking, part of the completion (OpenAI, vLLM, DeepSeek,
    # OpenRouter report it here).
    reasoning = _detail(get("completion_tokens_details"), "reasoning_tokens")
    return Usage(
        prompt,
        completion,
        total if _count(total) else prompt + completion,
        cached_tokens=min(cached, prompt) if _count(cached) else 0,
        reasoning_tokens=min(reasoning, completion) if _count(reasoning) else 0,
    )


def _detail(details: Any, name: str) -> Any:
    if isinstance(details, dict):
        return details.get(name)
    return getattr(details, name, None)


def _count(value: Any) -> TypeIs[int]:
    """Whether a server's figure is a token count: an int from 0 to `MAX_TOKEN_COUNT` (a bool
    is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT


def estimated_usage(prompt_chars: int, message: AssistantMessage) -> Usage:
    """About four characters a token, for the request sent and the answer received."""
    answer = len(message.content or "") + sum(
        len(call.name)
        + len(call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments))
        for call in message.tool_calls
    )
    prompt, completion = prompt_chars // 4 + 1, answer // 4 + 1
    return Usage(prompt, completion, prompt + completion, True)
