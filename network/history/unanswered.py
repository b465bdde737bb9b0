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

from collections.abc import Collection, Iterable, Sequence
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
    return _not_run(unanswered_calls(conversation), why)


def answered(
    messages: Sequence[Any],
    waiting: Sequence[ToolCall] = (),
    resolved: Collection[str] = (),
) -> list[Any]:
    """`messages` with a not-run result (the user moved on) before each message that follows
    tool calls still without their results: those of an assistant message among `messages`,
    and `waiting`, the calls the conversation before them ends with (`unanswered_calls`).
    Calls at the very end stay as they are: their results may still come. Calls in
    `resolved` (ids) get none: the request answers them, and the run gives them their result
    (`network.history.answer_order`), so they are never both not run and run."""
    out: list[Any] = []
    pending = {call.id: call for call in waiting if call.id not in resolved}
    for message in messages:
        if isinstance(message, ToolMessage):
            pending.pop(message.tool_call_id, None)
        else:
            if pending:
                out.extend(_not_run(pending.values(), MOVED_ON))
            pending = (
                {call.id: call for call in message.tool_calls if call.id not in resolved}
                if isinstance(message, AssistantMessage)
                else {}
            )
        out.append(message)
    return out


def _not_run(calls: Iterable[ToolCall], why: str) -> list[ToolMessage]:
    return [
        ToolMessage(call.id, f"Not run: {why} to {call.name!r}.", call.name, is_error=True)
        for call in calls
    ]
