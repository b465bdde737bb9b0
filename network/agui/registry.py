"""The AG-UI server's memory of its threads, kept in this process.

An AG-UI client sends its whole state and conversation with every request, but the server
cannot trust that copy: a client may hold an optimistic proposal it was shown, or edit keys
it may not write. So for each thread the server keeps its own record between requests: the
state as the last run left it (the checkpoint a rejection returns to), the interrupts waiting
for an answer, and whether a run is under way.

The registry is a plain in-memory map keyed by threadId: it is lost when the process stops,
is not shared between worker processes, and forgets the least recently used threads beyond
`max_threads` (never one with a run under way). Scoped keys (`user:`, `app:`) live in each
thread's state here; sharing them between threads is the job of a persistent thread store.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from network.run.interrupts import Interrupt

DEFAULT_MAX_THREADS = 10_000


@dataclass(slots=True, eq=False)
class ThreadRecord:
    """What the server remembers of one thread."""

    thread_id: str
    state: dict[str, Any] = field(default_factory=dict)  # JSON form, temp: keys excluded
    interrupts: list[Interrupt] = field(default_factory=list)  # waiting for an answer
    run_id: str | None = None  # the run under way, if any
    runs: int = 0

    @property
    def busy(self) -> bool:
        """Whether a run on this thread is under way."""
        return self.run_id is not None

    def client_view(self) -> dict[str, Any]:
        """The state as the client was last shown it: the state plus pending proposals."""
        if not self.interrupts:
            return self.state
        view = dict(self.state)
        for interrupt in self.interrupts:
            view.update(interrupt.proposal)
        return view


class ThreadRegistry:
    """Thread records by threadId, in memory (see the module docstring for the limits)."""

    def __init__(self, max_threads: int = DEFAULT_MAX_THREADS) -> None:
        self.max_threads = max_threads
        self._records: OrderedDict[str, ThreadRecord] = OrderedDict()

    def get(self, thread_id: str) -> ThreadRecord:
        """The record of `thread_id`, created empty for a thread not seen before."""
        record = self._records.get(thread_id)
        if record is None:
            record = self._records[thread_id] = ThreadRecord(thread_id)
            self._evict()
        else:
            self._records.move_to_end(thread_id)
        return record

    def peek(self, thread_id: str) -> ThreadRecord | None:
        """The record of `thread_id` if there is one (does not create or refresh it)."""
        return self._records.get(thread_id)

    def _evict(self) -> None:
        excess = len(self._records) - self.max_threads
        if excess <= 0:
            return
        for thread_id in [t for t, r in self._records.items() if not r.busy][:excess]:
            del self._records[thread_id]

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, thread_id: object) -> bool:
        return thread_id in self._records
