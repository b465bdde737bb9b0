"""The messages a request sent with its answers, added to the conversation once the run has
taken up the answered calls, whatever happened to that step: `HeldMessages`, a capability
the serving layer adds to such a run alone (`RunBookkeeping.capabilities`).

A request that answers a pending approval and also says something new holds the new
messages back until the answered calls have their results (`network.history.answer_order`).
They are the user's words: a step that fails (a remote agent that errs, a store that fails,
a client that leaves) or a model or router that fails after it must not lose them. So they
go in at the run's `resumed` stage, right after that step, also when it raised, and on a
stored thread they are committed at once (`keep`), not with the next agent call, which may
never come.

An answered call the step left without a result (it raised before the call finished) is
answered first, saying so: a user message after a tool call and before its result is a
conversation the providers refuse, on every later turn of the thread.

An answered call may wait again instead (a sub-agent used as a tool stops on another
approval): then the messages stay held until that call has its result. On a stored thread
the entry of the interrupt it waits on keeps them (`ThreadSession.hold`,
`network.threads.pending.PendingCall.held`), and the request that answers it holds them
again, from there; a client that keeps the conversation (the in-memory AG-UI server) sends
them again with that answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

from network.history.messages import AssistantMessage, ToolCall, ToolMessage
from network.history.unanswered import UNFINISHED
from network.logger import LazyLogger
from network.run.capability import Capability
from network.run.context import RunContext

log = LazyLogger("agent_network.run")


class HeldMessages(Capability):
    """Adds `messages` (what a request said after its answers) once the calls of `answered`
    (the ids of the calls the request answers) are taken up, then commits them with `keep`
    (a stored thread's: its messages not saved yet; None in memory).

    Made for one run (it keeps that run's messages): `messages` are those still held, ()
    once they are in the conversation (a client shown the conversation meanwhile is shown
    them too)."""

    def __init__(
        self,
        messages: Sequence[Any],
        answered: Collection[str],
        keep: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.messages: tuple[Any, ...] = tuple(messages)
        self.answered = answered
        self.keep = keep

    async def resumed(self, run: RunContext, error: BaseException | None) -> None:
        """Append the held messages (after the results the step gave the answered calls),
        then commit them; leave them held while an answered call waits again.

        `error` (the step raised): an answered call it left without a result (one that waits
        again, on an approval inside it, excepted) is first answered saying so, and a failure
        of the commit is logged, not raised, so the run ends with the step's own error."""
        held = self.messages
        if not held:
            return
        state = run.state
        left = without_result(state.messages, set(self.answered))
        waiting = {interrupt.tool_call_id for interrupt in run.engine.interrupts}
        if error is not None:
            state.append_messages([_unfinished(call) for call in left if call.id not in waiting])
        if not any(call.id in waiting for call in left):
            self.messages = ()
            state.append_messages(list(held))
        elif error is None:  # they wait with the call (`ThreadSession.hold`)
            return
        keep = self.keep
        if keep is None:
            return
        if error is None:
            await keep()
            return
        try:
            await keep()
        except Exception as failure:  # the run's own error is the one to raise
            log.warning("run.held_messages_not_kept", run_id=run.run_id, error=repr(failure))


def without_result(conversation: Sequence[Any], ids: set[str]) -> list[ToolCall]:
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
