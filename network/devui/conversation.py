"""A stored thread's conversation as the page shows it beside the timeline.

The same shape as the page builds from a live run's AG-UI messages: `role`, `content`, the
agent (`name`) of an assistant message, its tool calls, and the call a tool message answers.
Texts are cut like a step's (`bounded.MAX_TEXT`); a thread sends at most its last
`MAX_MESSAGES` messages (the newest are the ones a person continues from).

The store does not keep why a run stopped, so a stored thread's last run is summed up by what
it does keep: the run's number, its agent calls, and its output (the last assistant text).
"""

from __future__ import annotations

from typing import Any

from network.devui.bounded import cut
from network.devui.steps import arguments_text
from network.threads.thread_data import Thread

MAX_MESSAGES = 2_000


def message_view(message: Any) -> dict[str, Any]:
    """One message of the conversation."""
    role = getattr(message, "role", "unknown")
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):  # multimodal parts
        content = "\n".join(str(getattr(part, "text", "")) for part in content)
    view: dict[str, Any] = {"role": role, "content": cut(content or "")}
    name = getattr(message, "name", None)
    if name:
        view["name"] = cut(name, 256)
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        view["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": cut(arguments_text(c.arguments))}
            for c in calls
        ]
    if role == "tool":
        view["tool_call_id"] = message.tool_call_id
        view["is_error"] = bool(getattr(message, "is_error", False))
    return view


def conversation(thread: Thread) -> dict[str, Any]:
    """The thread's last `MAX_MESSAGES` messages, and how many were left out before them."""
    messages = thread.messages
    first = max(0, len(messages) - MAX_MESSAGES)
    return {
        "messages": [message_view(m) for m in messages[first:]],
        "messages_omitted": first,
    }


def last_run(thread: Thread, runs: list[int]) -> dict[str, Any] | None:
    """The last run of the thread: its number, its agent calls and its output, if any."""
    if not runs:
        return None
    number = runs[-1]
    calls = sum(1 for run in runs if run == number)
    output = None
    for result in reversed(thread.results):
        if result.text:
            output = cut(result.text)
            break
    return {"run": number, "calls": calls, "output": output}
