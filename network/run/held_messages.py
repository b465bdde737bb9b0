"""The messages a request sent with its answers, added to the conversation once the run has
taken up the answered calls, whatever happened to that step.

A request that answers a pending approval and also says something new holds the new
messages back until the answered calls have their results (`network.history.answer_order`,
`RunBookkeeping.held_messages`). They are the user's words: a step that fails (a remote
agent that errs, a store that fails, a client that leaves) or a model or router that fails
after it must not lose them. So they go in right after that step, also when it raised,
and on a stored thread they are committed at once (`RunBookkeeping.keep_messages`), not
with the next agent call, which may never come.

An answered call the step left without a result (it raised before the call finished) is
answered first, saying so: a user message after a tool call and before its result is a conversation
the providers refuse, on every later turn of the thread.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from network.history.messages import AssistantMessage, ToolCall, ToolMessage
from network.history.unanswered import UNFINISHED
from network.logger import LazyLogger
from network.run.context import RunContext

log = LazyLogger("agent_network.run")


async def add_held_messages(
    ctx: RunContext, answered: Collection[str], *, failed: bool = False
) -> None:
    """Append the held messages (after the results the step gave the calls of `answered`,
    the ids of the calls the request answered), then commit them.

    `failed`: the step raised; an answered call it left without a result (one that waits
    again, on an approval inside it, excepted) is first answered saying so, and a failure of
    the commit is logged, not raised, so the run ends with the step's own error."""
    held, ctx.engine.held_messages = ctx.engine.held_messages, ()
    if not held:
        return
    state = ctx.state
    if failed:
        waiting = {interrupt.tool_call_id for interrupt in ctx.engine.interrupts}
        missing = set(answered) - waiting
        state.append_messages([*map(_unfinished, _without_result(state.messages, missing))])
    state.append_messages(list(held))
    keep = ctx.engine.keep_messages
    if keep is None:
        return
    if not failed:
        await keep()
        return
    try:
        await keep()
    except Exception as error:  # the run's own error is the one to raise
        log.warning("run.held_messages_not_kept", run_id=ctx.run_id, error=repr(error))


def _without_result(conversation: Sequence[Any], ids: set[str]) -> list[ToolCall]:
    """The calls of `ids` the conversation holds without a result, in their order (read from
    its end: the answered calls are the last ones made)."""
    if not ids:
        return []
    answered: set[str] = set()
    found: list[ToolCall] = []
    for message in reversed(conversation):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
        elif isinstance(message, AssistantMessage):
            calls = [call for call in message.tool_calls if call.id in ids]
            found[:0] = [call for call in calls if call.id not in answered]
            ids = ids - {call.id for call in calls}
            if not ids:
                break
    return found


def _unfinished(call: ToolCall) -> ToolMessage:
    return ToolMessage(call.id, UNFINISHED.format(tool=call.name), call.name, is_error=True)
