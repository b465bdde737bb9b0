"""Tool-call ids unique within one answer, on every client.

A call's id is how its result finds it: the provider matches each tool message of the next
request to a call by it, the AG-UI client's verifier refuses a second `TOOL_CALL_START` with an
id it has already seen (so the run fails in the browser), and an approval is answered by it.
A server that sends one id twice in an answer, or none, would make two calls look like one.
The first call keeps the id it came with; a repeated or missing one gets a fresh id, and so
does one that holds a lone surrogate or is longer than 256 characters.
"""

from __future__ import annotations

from collections.abc import Collection

from agents.models._text import utf8_text
from network.ids import new_id

MAX_CALL_ID = 256  # an id is echoed in every later request, event and approval


def own_id(call_id: str | None, taken: Collection[str]) -> str:
    """`call_id` when the server sent one that no earlier call of the answer has (and one
    with a UTF-8 form, at most 256 characters: it is echoed everywhere), else a fresh id."""
    return (
        call_id
        if isinstance(call_id, str)
        and call_id
        and len(call_id) <= MAX_CALL_ID
        and utf8_text(call_id) == call_id
        and call_id not in taken
        else new_id("call_")
    )
