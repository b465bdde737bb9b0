"""The ids of appended messages, as every store checks them: an id the thread holds is refused.

A message is known by its id (a server adds a client's copy of one only once, and a snapshot
shows one message per id), so a second message under an id would be seen as the first, or not
at all. `network.add_messages` checks its messages against the thread it read, to fail early;
the store checks them again inside the commit's own transaction (`Commit.append_only`), where
no other commit can land in between: of two processes appending the same id at once, one
commits and the other is refused.

A stored message's id is the one a client sees (`shown_id`): its own, else a tool result's
`<toolCallId>:result`, else `msg_<position>`. A SQL store need not decode the whole
conversation to compare them: `Wanted` names the rows that could hold one of the ids (a
stored id among them; no stored id, and a position or a tool call id among those the ids
name), and only those are decoded and compared (`check_held`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from network.errors import MessageError
from network.history.messages import shown_id

_POSITION = re.compile(r"msg_(0|[1-9][0-9]{0,17})")
_RESULT = ":result"
_MAX_POSITION = 2**31  # a thread's messages are numbered in a 32-bit column: none lies beyond


def check_new_ids(conversation: Iterable[Any], added: Sequence[Any]) -> None:
    """`MessageError` on field "id" when an added message's id is one the thread's
    `conversation` already holds (as a client sees its messages: `shown_id`)."""
    check_held(enumerate(conversation), added)


def check_held(stored: Iterable[tuple[int, Any]], added: Sequence[Any]) -> None:
    """`check_new_ids` given some of the thread's messages with their positions (at least
    those `Wanted` names)."""
    if not any(message.id for message in added):  # nothing to compare: nothing is read
        return
    held = {shown_id(message, index) for index, message in stored}
    for index, message in enumerate(added):
        if message.id in held:
            raise MessageError(
                f"message {index}: id {message.id!r} is taken (the thread holds it): a message "
                "needs an id of its own; nothing was written",
                index=index,
                field="id",
            )


@dataclass(frozen=True, slots=True)
class Wanted:
    """The stored messages that could hold one of the added messages' ids: those whose own id
    is in `ids`, and, among those stored without one, the ones at `positions` and the tool
    results of `calls`."""

    ids: list[str]
    positions: list[int]
    calls: list[str]

    @classmethod
    def of(cls, added: Sequence[Any]) -> Wanted | None:
        """What to look for; None when no added message has an id (nothing to check)."""
        ids = list(dict.fromkeys(str(message.id) for message in added if message.id))
        if not ids:
            return None
        numbers = [int(found[1]) for found in map(_POSITION.fullmatch, ids) if found]
        positions = [number for number in numbers if number < _MAX_POSITION]
        calls = [item[: -len(_RESULT)] for item in ids if item.endswith(_RESULT)]
        return cls(ids, positions, calls)
