"""Tool calls at the end of a conversation that never got their result.

A run that stopped on an approval or a client tool call leaves its conversation ending with
the model's tool calls and no result for some of them. When the next turn is a new message
instead of their answers (`docs/threads.md`, "A new message moves on"), sending that
conversation as it is would put a user message between a tool call and its result, which
OpenAI, Anthropic and most chat templates refuse: the next model request would fail. So each
such call gets a result first that says it did not run (`not_run_results`), as a rejected
call does, and the model reads why.

On a stored thread a call may also be left without a result by a run that took up its answer
and died (its process killed) before it committed the result: the store keeps the call
answered, so it no longer waits, but the tool may well have run (a payment made). Such a call
(one the thread no longer waits on: `waiting`) is never said not to have run, which would
invite the model to call it again: its result says that the run that took up its answer
ended before it finished (`UNFINISHED`), as when that run fails.
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

UNFINISHED = (
    "No result: the run that took up the answer to this call ended before {tool!r} finished."
)
"""The result of an answered call whose run ended without giving it one: it may have run."""


def not_run_results(
    conversation: Sequence[Any],
    why: str = MOVED_ON,
    *,
    waiting: Collection[str] | None = None,
) -> list[ToolMessage]:
    """A result for each unanswered call (`unanswered_calls`) saying it did not run, and `why`
    (by default: the user moved on). `waiting`: the ids of the calls a stored thread still
    waits on; a call not among them was answered and taken up by a run that ended before
    its result was saved, and gets `UNFINISHED` instead (see the module docstring)."""
    calls = unanswered_calls(conversation)
    return _results(calls, why, _unfinished(calls, waiting))


def answered(
    messages: Sequence[Any],
    waiting: Sequence[ToolCall] = (),
    resolved: Collection[str] = (),
    still_waiting: Collection[str] | None = None,
) -> list[Any]:
    """`messages` with a not-run result (the user moved on) before each message that follows
    tool calls still without their results: those of an assistant message among `messages`,
    and `waiting`, the calls the conversation before them ends with (`unanswered_calls`).
    Calls at the very end stay as they are: their results may still come. Calls in
    `resolved` (ids) get none: the request answers them, and the run gives them their result
    (`network.history.answer_order`), so they are never both not run and run.
    `still_waiting`: the ids of the calls a stored thread still waits on; a call of
    `waiting` not among them gets `UNFINISHED` (see the module docstring)."""
    out: list[Any] = []
    pending = {call.id: call for call in waiting if call.id not in resolved}
    unfinished = _unfinished(pending.values(), still_waiting)
    for message in messages:
        if isinstance(message, ToolMessage):
            pending.pop(message.tool_call_id, None)
        else:
            if pending:
                out.extend(_results(pending.values(), MOVED_ON, unfinished))
            pending = (
                {call.id: call for call in message.tool_calls if call.id not in resolved}
                if isinstance(message, AssistantMessage)
                else {}
            )
        out.append(message)
    return out


def _unfinished(calls: Iterable[ToolCall], waiting: Collection[str] | None) -> set[str]:
    """The ids of `calls` a stored thread no longer waits on (`waiting`, when known): each was
    answered, and the run that took it up left it without a result."""
    if waiting is None:
        return set()
    return {call.id for call in calls if call.id not in waiting}


def _results(
    calls: Iterable[ToolCall], why: str, unfinished: Collection[str] = ()
) -> list[ToolMessage]:
    """Each call's result: not run (`why`), or `UNFINISHED` for a call of `unfinished`."""
    return [
        ToolMessage(
            call.id,
            UNFINISHED.format(tool=call.name)
            if call.id in unfinished
            else f"Not run: {why} to {call.name!r}.",
            call.name,
            is_error=True,
        )
        for call in calls
    ]
