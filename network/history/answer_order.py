"""Keeping each tool call's result right after its call, when a request both answers calls a
run stopped on and says something new.

A request that answers a pending approval (AG-UI `resume`, A2A `answers`) may also carry a
new user message ("also add syrup"). The answered calls run (or are rejected) in the run
that takes the answers, so their results come after the request's messages were read; the
providers refuse a conversation where a call's result follows a later user message (OpenAI
answers 400), and the model would read the call as answered after the user moved on. So:

- `hold_after_answers`: the request's messages are split where the answered calls' results
  belong; what comes after waits until the run has resumed the calls
  (`network.serving.held_messages`);
- `results_after_calls`: a client that keeps the conversation (the in-memory AG-UI server)
  appends the streamed results where it saw them, after the message it sent with the
  answers; each such result goes back right after its call on the next turn.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from network.history.messages import AssistantMessage, ToolMessage


def hold_after_answers(
    messages: Sequence[Any], call_ids: Collection[str]
) -> tuple[list[Any], list[Any]]:
    """`messages` split in two: those before the answered calls' results belong (up to the
    assistant message holding any of `call_ids`, and the tool results right after it), and
    those to append once the calls have their results. Without that assistant message among
    `messages` (a store holds it), the split is after the leading tool results."""
    start = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage) and any(
            call.id in call_ids for call in message.tool_calls
        ):
            start = index + 1
            break
    end = start
    while end < len(messages) and isinstance(messages[end], ToolMessage):
        end += 1
    return list(messages[:end]), list(messages[end:])


def results_after_calls(messages: Sequence[Any]) -> list[Any]:
    """`messages` with each tool result that follows a later non-tool message moved back to
    the end of its call's results (right after the assistant message that made the call and
    the tool results that directly follow it). Anything else keeps its place; a result whose
    call is not among `messages` stays where it is."""
    owner: dict[str, int] = {}  # call id -> index of the assistant message that made it
    misplaced: dict[int, list[Any]] = {}  # assistant index -> results to put back
    kept: list[tuple[int, Any]] = []
    last_assistant: int | None = None
    in_block = False  # still in the tool results right after the last assistant message
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            made_by = owner.get(message.tool_call_id)
            if made_by is not None and not (in_block and made_by == last_assistant):
                misplaced.setdefault(made_by, []).append(message)
                continue
            kept.append((index, message))
            continue
        in_block = False
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                owner[call.id] = index
            last_assistant, in_block = index, bool(message.tool_calls)
        kept.append((index, message))
    if not misplaced:
        return list(messages)
    out: list[Any] = []
    pending: list[Any] = []  # results to put back once the block they belong to ends
    for index, message in kept:
        if pending and not isinstance(message, ToolMessage):
            out.extend(pending)
            pending = []
        out.append(message)
        if index in misplaced:
            pending = misplaced[index]
    out.extend(pending)
    return out
