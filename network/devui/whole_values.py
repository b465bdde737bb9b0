"""The whole text of one part of a stored agent call, for the page's "show all" and "download".

The step views the page receives cut long texts (`bounded.MAX_TEXT`); this gives back what was
cut, read from the stored thread: the run's input, the prompt, the answer, or a tool call's
arguments or result.
"""

from __future__ import annotations

from typing import Any

from network.devui.steps import arguments_text, prompt_text
from network.threads.thread_data import Thread

PARTS = ("input", "prompt", "answer", "arguments", "result")


def whole_value(thread: Thread, step: int, part: str, call_id: str | None) -> str | None:
    """The text of `part` of agent call `step` (a tool call's, `call_id`, for `arguments` and
    `result`); None when the thread has no such step or call."""
    if not 0 <= step < len(thread.results):
        return None
    result = thread.results[step]
    if part == "input":
        return result.input
    if part == "prompt":
        return prompt_text(result)
    if part == "answer":
        return result.text or ""
    call: Any = next((c for c in result.tool_calls if c.id == call_id), None)
    if call is None:
        return None
    return arguments_text(call.arguments) if part == "arguments" else call.content
