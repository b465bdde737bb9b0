"""A thread's records as a store read them, kept so that no stored record is decoded twice, and
none before something reads it.

A thread only grows, and its messages, agent calls and summaries never change once committed.
So a store keeps, per thread, the rows it has read (`PagedRecords`: JSON text, decoded a page at
a time on first read) and on the next read fetches only what was committed since. Loading a
thread of 10,000 calls then costs what loading one of 10 does, even the first time in a
process: nothing is decoded until read, and a run reads only the newest turns (plus what its
routers, `history_of` or a model sent the whole conversation ask for).

Readers get `RecordLog`s over these sequences, sharing the decoded records: records are
read-only. A result's `history` is a `HistoryView` of the cached conversation, which only grows,
so the view stays the prefix it was.

The cache is bounded by a number of threads (least recently read dropped first). It is only
filled from committed rows, and a thread deleted and created again (a new `created_at`), moved
back by a rewind (its rewind count goes up) or shorter than its cache starts over, so it never
serves what the database no longer holds. A store names that incarnation of the thread.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from network.errors import ConfigurationError
from network.history.log import RecordLog
from network.history.results import InferenceResult
from network.history.summary import Summary
from network.numbers import check_number
from network.threads.codec import decode_messages, decode_result, decode_summary
from network.threads.paged import PagedRecords

DEFAULT_CACHED_THREADS = 256

ResultRow = tuple[str, int | None, float]
"""A stored agent call: its JSON text, its history's length (None: stored with it), its time."""


def check_window(last: Any, after: Any) -> None:
    """`get_results`' `last` (a count, or None) and `after` (a time, or None), checked before
    the store is read: a NaN time or count selected nothing, as if no call were stored, a bool
    was a count, and a float or a string failed in the slicing with a bare TypeError."""
    check_number("get_results: last", last, integer=True, optional=True)
    if after is None:
        return
    if isinstance(after, bool) or not isinstance(after, int | float) or after != after:
        raise ConfigurationError(
            f"get_results: after must be a time (seconds since the epoch), got {after!r}"
        )


@dataclass(slots=True)
class DecodedThread:
    """The rows of one thread, oldest first, each decoded on first read."""

    incarnation: object  # the thread's (created_at, rewinds): a new one starts over
    messages: PagedRecords[Any]
    results: PagedRecords[InferenceResult]
    summaries: list[Summary] = field(default_factory=list)

    def conversation(self, count: int) -> RecordLog[Any]:
        """The first `count` messages, for one reader (appends go to the reader's own list)."""
        return RecordLog(self.messages, count)

    def calls(self, count: int) -> RecordLog[InferenceResult]:
        """The first `count` agent calls, for one reader."""
        return RecordLog(self.results, count)

    def select(self, count: int, last: int | None, after: float | None) -> list[InferenceResult]:
        """The results `get_results` asks for among the first `count`: those stored after a
        time, then the last N. Only the results returned are decoded."""
        rows = self.results.rows
        chosen: Sequence[int] = range(count)
        if after is not None:
            chosen = [i for i in chosen if rows[i][2] > after]
        if last is not None:
            chosen = chosen[-last:] if last > 0 else []
        results = self.results
        return [results[i] for i in chosen]


class DecodedCache:
    """Per-thread rows of one database, decoded on read (an LRU of `max_threads` threads).

    `decoded` counts every record decoded through it (messages, results, summaries): what a
    load cost, for tests and benchmarks to read.
    """

    def __init__(self, max_threads: int = DEFAULT_CACHED_THREADS) -> None:
        # 0 keeps no thread; a negative bound failed the first load (evicting from nothing)
        check_number("DecodedCache: max_threads", max_threads, integer=True)
        self.max_threads = max_threads
        self.decoded = 0
        self._threads: OrderedDict[str, DecodedThread] = OrderedDict()

    def _count(self, decoded: int) -> None:
        self.decoded += decoded

    def _new(self, incarnation: object) -> DecodedThread:
        messages: PagedRecords[Any] = PagedRecords(decode_messages, self._count)

        def decode(rows: Sequence[ResultRow]) -> list[InferenceResult]:
            return [decode_result(text, messages, length) for text, length, _at in rows]

        return DecodedThread(incarnation, messages, PagedRecords(decode, self._count))

    def thread(
        self, thread_id: str, incarnation: object, messages: int, results: int
    ) -> DecodedThread:
        """The cache entry of a thread that holds `messages` and `results` records;
        `incarnation` tells a thread from one deleted and recreated, or rewound, under its id."""
        entry = self._threads.get(thread_id)
        if (
            entry is None
            or entry.incarnation != incarnation
            or len(entry.messages) > messages
            or len(entry.results) > results
        ):
            entry = self._threads[thread_id] = self._new(incarnation)
        self._threads.move_to_end(thread_id)
        while len(self._threads) > self.max_threads:
            self._threads.popitem(last=False)
        return entry

    def entry(self, thread_id: str) -> DecodedThread | None:
        """A thread's entry if the cache holds one (nothing is made or reordered)."""
        return self._threads.get(thread_id)

    def forget(self, thread_id: str) -> None:
        """Drop a thread's entry (it was deleted)."""
        self._threads.pop(thread_id, None)

    def extend(
        self,
        entry: DecodedThread,
        first_message: int,
        messages: Sequence[str],
        first_result: int,
        results: Iterable[Sequence[Any]],
        first_summary: int = 0,
        summaries: Sequence[str] = (),
    ) -> None:
        """Add rows read from position `first_*` on, skipping any that another reader of the
        same thread added meanwhile (so the sequences stay exact prefixes). Messages and
        results are kept undecoded; summaries (few, and every request reads the newest) are
        decoded now."""
        skip = len(entry.messages) - first_message
        if 0 <= skip < len(messages):
            entry.messages.add(messages[skip:])
        # Plain tuples of atomic values: the garbage collector stops tracing them.
        rows = [(text, length, at) for text, length, at in results]
        skip = len(entry.results) - first_result
        if 0 <= skip < len(rows):
            entry.results.add(rows[skip:])
        skip = len(entry.summaries) - first_summary
        if 0 <= skip < len(summaries):
            entry.summaries.extend(decode_summary(text) for text in summaries[skip:])
            self.decoded += len(summaries) - skip


_shared: OrderedDict[tuple[str, str], DecodedCache] = OrderedDict()
_SHARED_DATABASES = 8


def shared_cache(database: str, table_prefix: str) -> DecodedCache:
    """The decoded cache of one database, shared by every store this process opens on it.

    A run given a path or URL opens (and closes) a store of its own; sharing the cache is what
    lets the next run on the thread skip reading and decoding what this one already did. The
    cache only ever holds committed rows, and each read checks it against the database's counts.
    """
    key = (database, table_prefix)
    cache = _shared.get(key)
    if cache is None:
        cache = _shared[key] = DecodedCache()
    _shared.move_to_end(key)
    while len(_shared) > _SHARED_DATABASES:
        _shared.popitem(last=False)
    return cache
