"""`Summary`: what a summariser wrote in place of the oldest part of a conversation.

A context policy (`agents.ContextPolicy`) that drops old turns from a request can have them
summarised; the summary then goes to the model in their place. It is a record of the thread
like an agent call: committed once, with its provenance (who wrote it, in which run, for which
agent, covering which messages), and reused by later runs, so the same turns are never
summarised twice. The conversation itself is never changed: a summary covers a prefix of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from network.history.record import Record
from network.history.results import Usage


@dataclass(slots=True, weakref_slot=True)
class Summary(Record):
    """A summary of the conversation's first `covers` messages.

    `by` names the summariser (an agent's name or a function's), `agent` the agent whose
    request needed it, `run_id` the run that wrote it. `previous` is how many messages the
    summary it extended covered (0 when it summarised from the start).
    """

    text: str
    covers: int
    by: str = ""
    agent: str = ""
    run_id: str | None = None
    created_at: float = 0.0
    previous: int = 0
    usage: Usage = field(default_factory=Usage)
