"""Decoded thread records, kept so that each stored record is decoded once.

A thread only grows, and its messages, agent calls and summaries never change once committed.
So a store keeps, per thread, the records it has decoded, and on the next read decodes only
what was committed since: loading a thread of 10,000 calls costs what loading one of 10 does
(after the first load in the process), instead of decoding every record on every run.

Readers get the same objects (lists are sliced, records shared): records are read-only.
A result's `history` is a `HistoryView` of the cached conversation list, which only grows, so
the view stays the prefix it was.

The cache is bounded by a number of threads (least recently read dropped first). It is only
filled from committed rows, and a thread deleted and created again (a new `created_at`) or
shorter than its cache starts over, so it never serves what the database no longer holds.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from network.history.results import InferenceResult
from network.history.summary import Summary
from network.threads.codec import decode_messages, decode_result, decode_summary

DEFAULT_CACHED_THREADS = 256


@dataclass(slots=True)
class DecodedThread:
    """The decoded records of one thread, oldest first; `at` holds each result's stored time."""

    created_at: float
    messages: list[Any] = field(default_factory=list)
    results: list[InferenceResult] = field(default_factory=list)
    at: list[float] = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)

    def select(self, last: int | None, after: float | None) -> list[InferenceResult]:
        """The results `get_results` asks for: those stored after a time, then the last N."""
        results = self.results
        if after is not None:
            results = [r for r, at in zip(results, self.at, strict=True) if at > after]
        if last is not None:
            return list(results[-last:]) if last > 0 else []
        return list(results)


class DecodedCache:
    """Per-thread decoded records of one database (an LRU of `max_threads` threads).

    `decoded` counts every record decoded through it (messages, results, summaries): what a
    load cost, for tests and benchmarks to read.
    """

    def __init__(self, max_threads: int = DEFAULT_CACHED_THREADS) -> None:
        self.max_threads = max_threads
        self.decoded = 0
        self._threads: OrderedDict[str, DecodedThread] = OrderedDict()

    def thread(
        self, thread_id: str, created_at: float, messages: int, results: int
    ) -> DecodedThread:
        """The cache entry of a thread that holds `messages` and `results` records."""
        entry = self._threads.get(thread_id)
        if (
            entry is None
            or entry.created_at != created_at
            or len(entry.messages) > messages
            or len(entry.results) > results
        ):
            entry = self._threads[thread_id] = DecodedThread(created_at)
        self._threads.move_to_end(thread_id)
        while len(self._threads) > self.max_threads:
            self._threads.popitem(last=False)
        return entry

    def forget(self, thread_id: str) -> None:
        """Drop a thread's entry (it was deleted)."""
        self._threads.pop(thread_id, None)

    def extend(
        self,
        entry: DecodedThread,
        first_message: int,
        messages: Sequence[str],
        first_result: int,
        results: Iterable[tuple[str, int | None, float]],
        first_summary: int = 0,
        summaries: Sequence[str] = (),
    ) -> None:
        """Decode rows read from position `first_*` on, skipping any that another reader of
        the same thread already added meanwhile (so the lists stay exact prefixes)."""
        skip = len(entry.messages) - first_message
        if 0 <= skip < len(messages):
            new = messages[skip:]
            entry.messages.extend(decode_messages(new))
            self.decoded += len(new)
        rows = list(results)
        skip = len(entry.results) - first_result
        if 0 <= skip < len(rows):
            conversation = entry.messages
            for text, history_length, at in rows[skip:]:
                entry.results.append(decode_result(text, conversation, history_length))
                entry.at.append(at)
            self.decoded += len(rows) - skip
        skip = len(entry.summaries) - first_summary
        if 0 <= skip < len(summaries):
            entry.summaries.extend(decode_summary(text) for text in summaries[skip:])
            self.decoded += len(summaries) - skip


_shared: OrderedDict[tuple[str, str], DecodedCache] = OrderedDict()
_SHARED_DATABASES = 8


def shared_cache(database: str, table_prefix: str) -> DecodedCache:
    """The decoded cache of one database, shared by every store this process opens on it.

    A run given a path or URL opens (and closes) a store of its own; sharing the cache is what
    lets the next run on the thread skip decoding what this one already did. The cache only
    ever holds committed rows, and each read checks it against the database's counts.
    """
    key = (database, table_prefix)
    cache = _shared.get(key)
    if cache is None:
        cache = _shared[key] = DecodedCache()
    _shared.move_to_end(key)
    while len(_shared) > _SHARED_DATABASES:
        _shared.popitem(last=False)
    return cache
