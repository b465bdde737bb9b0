"""AG-UI threads on a thread store (`app(network, store=...)`): what is AG-UI's own.

The threads themselves (ownership by principal, the run lease, the record a request is
checked against, the conversation the store keeps) are the serving layer's
(`network.serving.stored`). What AG-UI adds: a client that comes back to a stored thread
without its conversation (a reloaded page, a new client on the same threadId) gets it back as
MESSAGES_SNAPSHOT right after the run's first STATE_SNAPSHOT (`ConversationReplay`), so it
holds the whole conversation beside the state; a client that holds it all is not sent it
again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from typing import Any

from ag_ui.core import StateSnapshotEvent

from network.agui.snapshot import message_id, messages_snapshot
from network.run.emitter import EventSink


class ConversationReplay:
    """A sink that gives a client coming back to a stored thread its conversation, right
    after the run's first STATE_SNAPSHOT.

    The client merges MESSAGES_SNAPSHOT into what it holds: the messages it keeps stay in
    its order, the others are appended. So it first gets the conversation as stored (which
    drops its unsent copy of the new message), then, when the request added messages, the
    whole conversation, which appends them after the stored ones. `held`: the messages the
    run adds once the calls its request answers have their results
    (`Admission.held_messages`, read when the snapshot goes): the client's new message
    is in the whole conversation it is sent, not dropped from its view.
    """

    def __init__(
        self,
        sink: EventSink,
        conversation: Any,
        stored: int,
        held: Callable[[], Sequence[Any]] = tuple,
    ) -> None:
        self.sink = sink
        self.conversation = conversation
        self.stored = stored  # how many of its messages were stored before this run
        self.held = held
        self.sent = False

    async def __call__(self, event: Any) -> None:
        await self.sink(event)
        if not self.sent and isinstance(event, StateSnapshotEvent):
            self.sent = True
            await self.sink(messages_snapshot(islice(self.conversation, self.stored)))
            held = self.held()
            if len(self.conversation) > self.stored or held:
                await self.sink(messages_snapshot([*self.conversation, *held]))


def lacks_stored_messages(conversation: Iterable[Any], client: list[Any]) -> bool:
    """Whether the client's messages miss any of the stored conversation's (by snapshot id)."""
    held = {message.id for message in client}
    return any(message_id(m, i) not in held for i, m in enumerate(conversation))
