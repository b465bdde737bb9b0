"""Tool calls at the end of a conversation that never got their result.

A run that stopped on an approval or a client tool call leaves its conversation ending with
the model's tool calls and no result for some of them. When the next turn is a new message
instead of their answers (`docs/threads.md`, "A new message moves on"), sending that
conversation as it is would put a user message between a tool call and its result, which
OpenAI, Anthropic and most chat templates refuse: the next model request would fail. So each
such call gets a result first that says it did not run (`not_run_results`), as a rejected
call does, and the model reads why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from network.history.messages import AssistantMessage, ToolCall, ToolMessage


def unanswered_calls(conversation: Sequence[Any]) -> list[ToolCall]:
    """The tool calls of the conversation's last assistant message that no tool message after
    it answers (none when the conversation ends otherwise)."""
    answered: set[str] = set()
    for message in reversed(conversation):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
            continue
        if isinstance(message, AssistantMessage):
            return [call for call in message.tool_calls if call.id not in answered]
        return []
    return []


MOVED_ON = "the user sent a new message instead of answering this call"


def not_run_results(conversation: Sequence[Any], why: str = MOVED_ON) -> list[ToolMessage]:
    """A result for each unanswered call (`unanswered_calls`) saying it did not run, and `why`
    (by default: the user moved on)."""
    return [
        ToolMessage(call.id, f"Not run: {why} to {call.name!r}.", call.name, is_error=True)
        for call in unanswered_calls(conversation)
    ]
