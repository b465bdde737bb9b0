"""`MemoryStore`: threads kept in this process's memory.

For tests, notebooks and short-lived servers: everything is lost when the process ends. It
keeps what the SQL store keeps, JSON text and all, so code tested against it behaves the same
on SQLite or PostgreSQL: a run's objects are never stored, only their JSON. Records read back
are decoded on first read, a page at a time, and then shared by every reader
(`network.threads.decoded`), as on SQL; a load hands out `RecordLog`s over them, so it neither
decodes nor copies the thread's records, whatever its length.

Every method runs without awaiting in the middle of its work, so on one event loop each is
atomic; a commit is prepared on copies and swapped in only when every part of it succeeded.

By default it keeps every thread until it is deleted. Given `max_threads` or `max_bytes` (what
a server that strangers talk to needs: the servers' own default store has both), it forgets
the least recently used threads beyond them, never one a run holds the lease of (a run under
way, `network.threads.leases`): a forgotten thread is as if deleted. Its bytes are the
lengths of the JSON texts it keeps (messages, results, summaries, each value a key was given,
pending calls) plus a fixed overhead per thread and per commit; the process holds more than
that (Python's objects, the decoded records readers share).
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import anyio

from network.errors import ConfigurationError, StaleThreadError
from network.history.results import InferenceResult
from network.numbers import check_sizes
from network.threads.checkpoint_data import ThreadOrigin
from network.threads.codec import encode_message, encode_result, encode_summary
from network.threads.decoded import DecodedCache, DecodedThread, ResultRow, check_window
from network.threads.ids import check_id, check_ids
from network.threads.leases import MemoryLeases
from network.threads.memory_timeline import MemoryTimeTravel
from network.threads.message_ids import Wanted, check_new_ids
from network.threads.pending import PendingCall, waiting_error
from network.threads.pending_claims import check_claims
from network.threads.protocol import BaseStore, ThreadExistsError, ThreadNotFoundError
from network.threads.thread_data import (
    Commit,
    Thread,
    ThreadInfo,
    decode_value,
)
from network.threads.timeline import CallRow, KeyLog, Mark, commit_effects, commit_keys


@dataclass(slots=True)
class _StoredThread:
    info: ThreadInfo
    messages: list[str] = field(default_factory=list)
    results: list[ResultRow] = field(default_factory=list)  # atomic tuples: GC-untracked
    summaries: list[str] = field(default_factory=list)
    state: dict[str, str] = field(default_factory=dict)
    # pending call id -> its JSON text; answered ones move to `answered` (id -> answering run)
    pending: dict[str, str] = field(default_factory=dict)
    answered: dict[str, str | None] = field(default_factory=dict)
    withdrawn: dict[str, str] = field(default_factory=dict)  # answered ones a rewind withdrew
    calls: list[CallRow] = field(default_factory=list)  # each result's agent, run and time
    marks: list[Mark] = field(default_factory=list)  # one per commit (network.threads.timeline)
    keys: KeyLog = field(default_factory=KeyLog)  # every value of every thread key
    rewinds: int = 0  # how often it was moved back: a reader's cached records are then stale
    size: int = 0  # bytes counted against the store's `max_bytes` (`_measure`)


THREAD_OVERHEAD = 512  # a stored thread's own objects, roughly, so empty threads are not free
COMMIT_OVERHEAD = 128  # a commit's mark and call rows beyond their texts


class MemoryStore(MemoryTimeTravel, BaseStore):
    """A thread store in a dict. Safe for concurrent runs on one event loop.

    It keeps checkpoints: `checkpoints`, `state_at`, `fork_thread`, `rewind_thread` (see
    `network.threads.checkpoint_store`).

    Beyond `max_threads` or `max_bytes`, the least recently used threads no run holds are
    forgotten (see the module docstring).

    Args:
        max_threads: the most threads kept at once (default: no limit).
        max_bytes: the most bytes all threads may take together (default: no limit).
    """

    def __init__(self, *, max_threads: int | None = None, max_bytes: int | None = None) -> None:
        limits = {"max_threads": max_threads, "max_bytes": max_bytes}
        check_sizes(
            "MemoryStore", ConfigurationError, **{k: v for k, v in limits.items() if v is not None}
        )
        self.max_threads = max_threads
        self.max_bytes = max_bytes
        self._bytes = 0
        self._leases = MemoryLeases()  # its own, so eviction sees which threads a run holds
        # least recently used first (kept in that order only when bounded)
        self._threads: OrderedDict[str, _StoredThread] = OrderedDict()
        self._origins: dict[str, ThreadOrigin] = {}
        self._user: dict[tuple[str, str], dict[str, str]] = {}
        self._app: dict[str, dict[str, str]] = {}
        self.decoded = DecodedCache(max_threads=1 << 30)  # the texts are all in memory anyway

    @property
    def bytes(self) -> int:
        """The bytes all threads take together, as `max_bytes` counts them."""
        return self._bytes

    def run_leases(self) -> MemoryLeases:
        """The run leases of this store (`network.threads.store_leases.run_leases`)."""
        return self._leases

    async def _create_thread(self, info: ThreadInfo) -> None:
        await anyio.lowlevel.checkpoint()
        if info.thread_id in self._threads:
            raise ThreadExistsError(f"thread {info.thread_id!r} already exists")
        self._admit(info.thread_id, _StoredThread(info.model_copy(deep=True)))

    def _admit(self, thread_id: str, stored: _StoredThread, *, keep: tuple[str, ...] = ()) -> None:
        """Keep `stored` as `thread_id` (replacing the one there), measured and most recently
        used, then forget the least recently used threads beyond the limits (never it, nor
        the threads of `keep`)."""
        old = self._threads.get(thread_id)
        if old is not None:
            self._bytes -= old.size
        stored.size = _measure(stored)
        self._bytes += stored.size
        self._threads[thread_id] = stored
        self._threads.move_to_end(thread_id)
        self._evict((thread_id, *keep))

    def _touch(self, thread_id: str) -> None:
        """Mark `thread_id` most recently used (when the store is bounded: order matters)."""
        if self.max_threads is not None or self.max_bytes is not None:
            self._threads.move_to_end(thread_id)

    def _evict(self, keep: tuple[str, ...]) -> None:
        """Forget the least recently used threads until within the limits, skipping `keep`
        and those a run holds the lease of: from the oldest end, one at a time (a full store
        admits a thread at the same cost as an empty one)."""
        max_threads, max_bytes = self.max_threads, self.max_bytes
        if max_threads is None and max_bytes is None:
            return
        threads = self._threads
        now = time.time()
        skipped: list[tuple[str, _StoredThread]] = []  # held ones (and `keep`), put back
        while threads and (
            (max_threads is not None and len(threads) + len(skipped) > max_threads)
            or (max_bytes is not None and self._bytes > max_bytes)
        ):
            thread_id, stored = threads.popitem(last=False)
            if thread_id in keep or self._leases.held(thread_id, now):
                skipped.append((thread_id, stored))
                continue
            self._bytes -= stored.size
            self.decoded.forget(thread_id)
            self._origins.pop(thread_id, None)
        for thread_id, stored in reversed(skipped):  # where they were: the oldest end
            threads[thread_id] = stored
            threads.move_to_end(thread_id, last=False)

    async def get_thread(self, thread_id: str) -> Thread | None:
        check_id("thread_id", thread_id)
        await anyio.lowlevel.checkpoint()
        stored = self._threads.get(thread_id)
        if stored is None:
            return None
        self._touch(thread_id)
        info = stored.info
        entry = self._sync(thread_id, stored)
        return Thread.model_construct(
            **info.model_copy(deep=True).__dict__,
            messages=entry.conversation(len(stored.messages)),
            results=entry.calls(len(stored.results)),
            summaries=list(entry.summaries),
            state=_decode(stored.state),
            user_state=_decode(self._user.get((info.app_name, info.user_id), {})),
            app_state=_decode(self._app.get(info.app_name, {})),
            pending=[PendingCall.from_text(text) for text in stored.pending.values()],
        )

    def _sync(self, thread_id: str, stored: _StoredThread) -> DecodedThread:
        """The thread's decoded records, decoding only those committed since the last read."""
        entry = self.decoded.thread(
            thread_id,
            (stored.info.created_at, stored.rewinds),
            len(stored.messages),
            len(stored.results),
        )
        m, r, n = len(entry.messages), len(entry.results), len(entry.summaries)
        self.decoded.extend(
            entry,
            m,
            stored.messages[m:],
            r,
            stored.results[r:],
            n,
            stored.summaries[n:],
        )
        return entry

    async def list_threads(
        self, *, app_name: str | None = None, user_id: str | None = None
    ) -> list[ThreadInfo]:
        check_ids(user_id=user_id, app_name=app_name)
        await anyio.lowlevel.checkpoint()
        found = [
            stored.info.model_copy(deep=True)
            for stored in self._threads.values()
            if (app_name is None or stored.info.app_name == app_name)
            and (user_id is None or stored.info.user_id == user_id)
        ]
        found.sort(key=lambda info: info.thread_id)
        found.sort(key=lambda info: info.updated_at, reverse=True)
        return found

    async def delete_thread(self, thread_id: str) -> bool:
        check_id("thread_id", thread_id)
        await anyio.lowlevel.checkpoint()
        self.decoded.forget(thread_id)
        self._origins.pop(thread_id, None)
        stored = self._threads.pop(thread_id, None)
        if stored is None:
            return False
        self._bytes -= stored.size
        return True

    async def delete_user_state(self, user_id: str, *, app_name: str | None = None) -> int:
        """Delete every `user:` key of `user_id` (in `app_name`, or in every app); how many."""
        check_id("user_id", user_id, allow_empty=True)
        check_ids(app_name=app_name)
        await anyio.lowlevel.checkpoint()
        owned = [key for key in self._user if key[1] == user_id and app_name in (None, key[0])]
        return sum(len(self._user.pop(key)) for key in owned)

    async def get_results(
        self, thread_id: str, *, last: int | None = None, after: float | None = None
    ) -> list[InferenceResult] | None:
        check_id("thread_id", thread_id)
        check_window(last, after)
        await anyio.lowlevel.checkpoint()
        stored = self._threads.get(thread_id)
        if stored is None:
            return None
        self._touch(thread_id)
        entry = self._sync(thread_id, stored)
        return entry.select(len(stored.results), last, after)

    async def append_results(self, thread_id: str, commit: Commit) -> int:
        check_id("thread_id", thread_id)
        await anyio.lowlevel.checkpoint()
        return self._commit_now(thread_id, commit)

    def _commit_now(self, thread_id: str, commit: Commit) -> int:
        """`append_results` without a pause: atomic on the event loop."""
        stored = self._threads.get(thread_id)
        if stored is None:
            raise ThreadNotFoundError(f"thread {thread_id!r} does not exist (deleted?)")
        commit = _admitted(thread_id, stored, commit)
        if commit.append_only and Wanted.of(commit.messages):  # checked here, not only when read
            held = self._sync(thread_id, stored).conversation(len(stored.messages))
            check_new_ids(held, commit.messages)
        # Everything that can fail happens before anything is changed.
        now = time.time()
        messages = [encode_message(message) for message in commit.messages]
        results = [
            (encode_result(r), r.history_length, r.result.started_at or now) for r in commit.results
        ]
        summaries = [encode_summary(summary) for summary in commit.summaries]
        info = stored.info
        user_key = (info.app_name, info.user_id)
        user_state = dict(self._user.get(user_key, {}))
        app_state = dict(self._app.get(info.app_name, {}))
        _apply_shared(commit, user_state, app_state)
        stored.messages.extend(messages)
        stored.results.extend(results)
        stored.summaries.extend(summaries)
        stored.state.update(commit.state)
        for key in commit.removed:
            stored.state.pop(key, None)
        _apply_pending(stored, commit, info.revision + 1)
        self._user[user_key] = user_state
        self._app[info.app_name] = app_state
        _advance(stored, commit, results, now)
        grown = _grown(commit, messages, results, summaries)
        stored.size += grown
        self._bytes += grown
        self._touch(thread_id)
        self._evict((thread_id,))
        return info.revision


def _admitted(thread_id: str, stored: _StoredThread, commit: Commit) -> Commit:
    """`commit` when the thread takes it (an append-only one at the thread's revision), or
    the error that says why not: the thread waits on a call, a claim was answered already,
    another run committed first."""
    info = stored.info
    if commit.append_only:  # depends on no revision, only on what the thread waits on
        if stored.pending:
            waiting = [PendingCall.from_text(text) for text in stored.pending.values()]
            raise waiting_error(thread_id, waiting)
        commit = dataclasses.replace(commit, revision=info.revision)
    # A claim is judged before the revision: a second answer is told it came second.
    check_claims(thread_id, commit.answered, stored.answered, stored.pending, stored.withdrawn)
    if info.revision != commit.revision:
        raise StaleThreadError(
            f"thread {thread_id!r} is at revision {info.revision}, but this run loaded "
            f"revision {commit.revision}: another run committed to it meanwhile",
            thread_id=thread_id,
            expected=commit.revision,
            found=info.revision,
        )
    return commit


def _apply_shared(commit: Commit, user_state: dict[str, str], app_state: dict[str, str]) -> None:
    """The commit's `user:` and `app:` writes applied to (copies of) the shared keys."""
    for write in commit.shared:
        target = user_state if write.scope == "user" else app_state
        value = write.apply(target.get(write.key))
        if value is None:
            target.pop(write.key, None)
        else:
            target[write.key] = value


def _advance(stored: _StoredThread, commit: Commit, results: list[ResultRow], now: float) -> None:
    """The thread one revision on, its records appended: its counts, each new call's row,
    the commit's mark and the values of the keys it wrote (`network.threads.timeline`)."""
    info = stored.info
    info.revision += 1
    info.updated_at = max(now, info.updated_at)
    info.message_count = len(stored.messages)
    info.result_count = len(stored.results)
    stored.calls.extend(
        CallRow(r.result.agent, commit.run_id, at)
        for r, (_, _, at) in zip(commit.results, results, strict=True)
    )
    stored.marks.append(
        Mark(
            info.revision,
            len(results),
            len(stored.results),
            len(stored.messages),
            len(stored.summaries),
            now,
            commit.run_id,
            commit_keys(commit),
            commit_effects(commit),
        )
    )
    stored.keys.record(info.revision, commit)


def _apply_pending(stored: _StoredThread, commit: Commit, revision: int) -> None:
    """Move the claimed calls to `answered`, and add the calls the commit stopped on (with
    `revision`, the thread's after the commit)."""
    for call_id in commit.answered:
        stored.pending.pop(call_id, None)
        stored.answered[call_id] = commit.run_id
    for entry in commit.pending:  # a model may reuse a call id in a later run
        stored.answered.pop(entry.id, None)
        stored.withdrawn.pop(entry.id, None)
        stored.pending[entry.id] = entry.to_text(revision)


def _measure(stored: _StoredThread) -> int:
    """The bytes `stored` is counted for: its texts and a fixed overhead (module docstring)."""
    return (
        THREAD_OVERHEAD
        + len(stored.info.thread_id)
        + sum(map(len, stored.messages))
        + sum(len(row[0]) for row in stored.results)
        + sum(map(len, stored.summaries))
        + sum(len(key) + len(text) for key, text in stored.state.items())
        + sum(map(len, stored.pending.values()))
        + COMMIT_OVERHEAD * len(stored.marks)
    )


def _grown(
    commit: Commit, messages: list[str], results: list[ResultRow], summaries: list[str]
) -> int:
    """The bytes a commit adds to its thread: its texts, the values it wrote (every value of
    a key is kept, `KeyLog`), the calls it stopped on, its mark."""
    return (
        COMMIT_OVERHEAD
        + sum(map(len, messages))
        + sum(len(row[0]) for row in results)
        + sum(map(len, summaries))
        + sum(len(key) + len(text) for key, text in commit.state.items())
        + sum(len(entry.id) + THREAD_OVERHEAD // 4 for entry in commit.pending)
    )


def _decode(values: dict[str, str]) -> dict[str, Any]:
    return {key: decode_value(text) for key, text in values.items()}
