"""A server's memory of its threads, kept in this process (when it runs on no thread store).

A client may hold a copy of a thread's state and conversation (an AG-UI client sends both with
every request), but the server cannot trust that copy: a client may hold an optimistic
proposal it was shown, or edit keys it may not write. So for each thread the server keeps its
own record between requests: the state as the last run left it (the checkpoint a rejection
returns to), the interrupts waiting for an answer, the tool calls the server issued (the only
ones a client may send results for), who owns the thread, and whether a run is under way. On
a thread store the same record is read from the store for each request
(`network.serving.stored`).

The registry is a plain in-memory map keyed by thread id: it is lost when the process stops,
is not shared between worker processes, and forgets the least recently used threads beyond
`max_threads` or `max_bytes` (never one with a run under way). A record joins the registry
only when a request on its thread is accepted (`admit`), so refused requests create and
evict nothing. Scoped keys (`user:`, `app:`) live in each thread's state here; sharing them
between threads is the job of a persistent thread store.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from network.errors import ConfigurationError
from network.numbers import check_sizes
from network.run.interrupts import Interrupt
from network.utf8 import utf8_text

DEFAULT_MAX_THREADS = 10_000
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_THREAD_BYTES = 4 * 1024 * 1024
RECORD_OVERHEAD = 512  # the record's own objects, roughly, so empty threads are not free
ID_OVERHEAD = 128  # one entry of `issued_calls` beyond its id: the digest, the dict slot
# `ThreadRecord.issued_calls`' mark of a call of the server's own tool whose result is not
# known yet (held for confirmation, or its run ended before it returned): only the server
# answers it, so a client's result for it is refused (a digest is 64 hex digits: no clash).
SERVER_CALL = "server_call"


def result_digest(content: str) -> str:
    """What a record keeps of a tool result (`ThreadRecord.issued_calls`): enough to
    recognise it, nothing to leak. Of the text as the client reads it: a lone surrogate (a
    file name a tool read with `surrogateescape`, say) is U+FFFD on the wire, and the client
    sends it back so."""
    return hashlib.sha256(utf8_text(content).encode("utf-8")).hexdigest()


def json_size(value: Any) -> int:
    """The length of `value` as compact JSON: the measure of every limit here."""
    return len(json.dumps(value, separators=(",", ":"), default=str))


@dataclass(slots=True, eq=False)
class ThreadRecord:
    """What the server remembers of one thread."""

    thread_id: str
    owner: str | None = None  # the principal `authorize` returned for the creating request
    state: dict[str, Any] = field(default_factory=dict)  # JSON form, temp: keys excluded
    interrupts: list[Interrupt] = field(default_factory=list)  # waiting for an answer
    # tool call id the server streamed -> digest of its known result; None: a client tool
    # call not answered yet (the client answers it), SERVER_CALL: the server's own, not yet
    issued_calls: dict[str, str | None] = field(default_factory=dict)
    run_id: str | None = None  # the run under way, if any
    runs: int = 0
    # the agent that had the conversation at the end of the last run (handoffs): the client
    # sends messages back, not agent calls, so the server keeps it (`RunContext.active_agent`)
    active_agent: str | None = None
    # hex (trace id, span id) of the root span of the run that stopped on `interrupts`, when
    # it was traced: the run that answers them links its trace to it
    trace: tuple[str, str] | None = None
    size: int = 0  # bytes counted against the registry's `max_bytes` (see `measure`)

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

    def measure(self) -> int:
        """The record's size in bytes (state, interrupts with their checkpoints, call ids)."""
        size = RECORD_OVERHEAD + len(self.thread_id) + json_size(self.state)
        for interrupt in self.interrupts:
            size += json_size(dataclasses.asdict(interrupt))
        size += sum(len(call_id) + ID_OVERHEAD for call_id in self.issued_calls)
        return size


class ThreadRegistry:
    """Thread records by threadId, in memory (see the module docstring for the limits).

    Args:
        max_threads: the most threads remembered at once.
        max_bytes: the most bytes all records may take together (state, interrupts, ids).
        max_thread_bytes: the largest state one thread may hold; a request whose state would
            be larger is refused (413) by the server.
    """

    def __init__(
        self,
        max_threads: int = DEFAULT_MAX_THREADS,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_thread_bytes: int = DEFAULT_MAX_THREAD_BYTES,
    ) -> None:
        check_sizes(
            "ThreadRegistry",
            max_threads=max_threads,
            max_bytes=max_bytes,
            max_thread_bytes=max_thread_bytes,
        )
        if max_thread_bytes > max_bytes:
            raise ConfigurationError(
                f"ThreadRegistry: max_thread_bytes ({max_thread_bytes}) is larger than "
                f"max_bytes ({max_bytes})"
            )
        self.max_threads = max_threads
        self.max_bytes = max_bytes
        self.max_thread_bytes = max_thread_bytes
        self._records: OrderedDict[str, ThreadRecord] = OrderedDict()
        self._bytes = 0

    @property
    def bytes(self) -> int:
        """The bytes all records take together, as measured when each last changed."""
        return self._bytes

    def get(self, thread_id: str) -> ThreadRecord:
        """The record of `thread_id`, created empty (and admitted) for a thread not seen before."""
        record = self._records.get(thread_id)
        if record is None:
            record = ThreadRecord(thread_id)
            self.admit(record)
        else:
            self._records.move_to_end(thread_id)
        return record

    def peek(self, thread_id: str) -> ThreadRecord | None:
        """The record of `thread_id` if there is one (does not create or refresh it)."""
        return self._records.get(thread_id)

    def admit(self, record: ThreadRecord) -> None:
        """Add `record` (or mark it most recently used), then forget the oldest idle threads."""
        existing = self._records.get(record.thread_id)
        if existing is not None and existing is not record:
            raise ConfigurationError(f"thread {record.thread_id!r} already has another record")
        if existing is None:
            self._records[record.thread_id] = record
            record.size = record.measure()
            self._bytes += record.size
        else:
            self._records.move_to_end(record.thread_id)
        self._evict(keep=record)

    def resize(self, record: ThreadRecord) -> None:
        """Measure `record` again after it changed, then forget the oldest idle threads."""
        if self._records.get(record.thread_id) is not record:
            return  # forgotten meanwhile: nothing to count
        size = record.measure()
        self._bytes += size - record.size
        record.size = size
        self._evict(keep=record)

    def _evict(self, keep: ThreadRecord) -> None:
        """Forget the least recently used idle threads until within the limits: from the
        oldest end, one at a time (never a copy of the whole map: a full registry admits a
        thread at the same cost as an empty one)."""
        records = self._records
        skipped: list[ThreadRecord] = []  # busy ones (and `keep`), put back where they were
        while records and (
            len(records) + len(skipped) > self.max_threads or self._bytes > self.max_bytes
        ):
            _, record = records.popitem(last=False)
            if record.busy or record is keep:
                skipped.append(record)
                continue
            self._bytes -= record.size
        for record in reversed(skipped):
            records[record.thread_id] = record
            records.move_to_end(record.thread_id, last=False)

    def owned_by(self, principal: str | None) -> list[str]:
        """The ids of the threads `principal` created, most recently used first."""
        return [
            thread_id
            for thread_id, record in reversed(self._records.items())
            if record.owner == principal
        ]

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, thread_id: object) -> bool:
        return thread_id in self._records
