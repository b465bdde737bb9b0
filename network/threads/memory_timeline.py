"""`MemoryStore`'s checkpoints, fork and rewind (see `network.threads.checkpoint_store`).

The store keeps, per thread, one `Mark` per commit and every value of every thread key
(`KeyLog`), so a checkpoint is found by bisection and its state read per key, never replayed.
A fork or rewind copies the stored JSON texts (lists of strings: cheap); the decoded records of
the forked thread are decoded again on first read, like any thread's. Each method does its
work without pausing, so on one event loop it is atomic.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import anyio

from network.threads.checkpoint_data import (
    Checkpoint,
    CheckpointState,
    ForkResult,
    RewindReport,
    ThreadOrigin,
)
from network.threads.checkpoint_store import CheckpointBase, ForkRequest
from network.threads.decoded import DecodedCache, DecodedThread
from network.threads.ids import check_id
from network.threads.pending import stored_revision
from network.threads.pending_claims import withdrawal, withdrawn_reason
from network.threads.protocol import ThreadExistsError, ThreadNotFoundError
from network.threads.thread_data import Commit, decode_value
from network.threads.timeline import (
    Mark,
    checkpoint_index,
    checkpoint_of,
    list_checkpoints,
    predates,
    shared_writes_after,
    span,
    summaries_at,
    tool_calls_after,
)


class MemoryTimeTravel(CheckpointBase):
    """The time-travel half of `MemoryStore` (a mixin over its dict of stored threads)."""

    _threads: dict[str, Any]
    _origins: dict[str, ThreadOrigin]
    decoded: DecodedCache

    def _sync(self, thread_id: str, stored: Any) -> DecodedThread:
        raise NotImplementedError

    def _commit_now(self, thread_id: str, commit: Commit) -> int:
        raise NotImplementedError

    def _admit(self, thread_id: str, stored: Any, *, keep: tuple[str, ...] = ()) -> None:
        raise NotImplementedError

    async def _stored(self, thread_id: str) -> Any:
        check_id("thread_id", thread_id)
        await anyio.lowlevel.checkpoint()
        return self._threads.get(thread_id)

    async def checkpoints(self, thread_id: str) -> list[Checkpoint] | None:
        """The thread's checkpoints, oldest first; None for a missing thread."""
        stored = await self._stored(thread_id)
        if stored is None:
            return None
        return list_checkpoints(stored.marks, stored.calls)

    def _locate(self, stored: Any, checkpoint: Any) -> tuple[int, int, int]:
        """(call index, first mark, last mark) of a checkpoint of a stored thread."""
        thread_id = stored.info.thread_id
        index = checkpoint_index(thread_id, checkpoint, len(stored.results))
        found = span(stored.marks, index)
        if found is None:
            raise predates(thread_id, index)
        return index, found[0], found[1]

    async def state_at(
        self, thread_id: str, checkpoint: int | Checkpoint
    ) -> CheckpointState | None:
        """The thread as it was at `checkpoint`; None for a missing thread."""
        stored = await self._stored(thread_id)
        if stored is None:
            return None
        index, first, last = self._locate(stored, checkpoint)
        marks: list[Mark] = stored.marks
        start, end = marks[first], marks[last]
        entry = self._sync(thread_id, stored)
        return CheckpointState.model_construct(
            thread_id=thread_id,
            checkpoint=checkpoint_of(index, stored.calls[index], start, marks[first : last + 1]),
            state={key: decode_value(text) for key, text in stored.keys.at(end.revision).items()},
            messages=entry.conversation(start.messages),
            results=entry.calls(start.results),
            summaries=list(entry.summaries[: summaries_at(marks, last)]),
        )

    def _copy(self, stored: Any, new_thread_id: str, last: int) -> Any:
        """A new stored thread holding `stored` up to its mark `last`, waiting on nothing."""
        marks: list[Mark] = stored.marks
        end = marks[last]
        results = marks[last].results
        now = time.time()
        info = stored.info.model_copy(
            update={
                "thread_id": new_thread_id,
                "revision": end.revision,
                "created_at": now,
                "updated_at": now,
                "message_count": end.messages,
                "result_count": results,
            },
            deep=True,
        )
        return dataclasses.replace(
            stored,
            info=info,
            messages=stored.messages[: end.messages],
            results=stored.results[:results],
            calls=stored.calls[:results],
            summaries=stored.summaries[: summaries_at(marks, last)],
            state=stored.keys.at(end.revision),
            marks=marks[: last + 1],
            keys=stored.keys.upto(end.revision),
            rewinds=0,
            pending={},
            answered={},
            withdrawn={},
        )

    async def _source(
        self, thread_id: str, checkpoint: Any, new_field: str, new_thread_id: str
    ) -> tuple[Any, int, int]:
        """A fork's or rewind's source thread, once the new thread's id (checked as
        `new_field`) is found free; the checkpoint's call index and last mark in it."""
        check_id(new_field, new_thread_id)
        stored = await self._stored(thread_id)
        if stored is None:
            raise ThreadNotFoundError(f"thread {thread_id!r} does not exist")
        if new_thread_id in self._threads:
            raise ThreadExistsError(f"thread {new_thread_id!r} already exists")
        index, _first, last = self._locate(stored, checkpoint)
        return stored, index, last

    async def _fork_thread(self, request: ForkRequest) -> ForkResult:
        thread_id, new_thread_id = request.thread_id, request.new_thread_id
        stored, index, last = await self._source(
            thread_id, request.at, "new_thread_id", new_thread_id
        )
        fork = self._copy(stored, new_thread_id, last)
        fork.pending = _waiting_at(stored, stored.marks[last].revision)
        if request.metadata is not None:
            fork.info.metadata = request.metadata
        origin = request.origin(index, fork.info.created_at)
        self._origins[new_thread_id] = origin
        self._admit(new_thread_id, fork)
        if request.state:
            commit = Commit(revision=fork.info.revision, state=request.state)
            self._commit_now(new_thread_id, commit)
        return ForkResult.model_construct(
            thread=fork.info.model_copy(deep=True),
            origin=origin,
            shared_keys=shared_writes_after(stored.marks[last + 1 :]),
        )

    async def rewind_thread(
        self, thread_id: str, *, to: int | Checkpoint, kept_as: str
    ) -> RewindReport:
        """Move `thread_id` back to `to`, keeping the thread as it was as `kept_as`."""
        stored, index, last = await self._source(thread_id, to, "kept_as", kept_as)
        marks: list[Mark] = stored.marks
        count = len(stored.results)
        tool_calls = tool_calls_after(marks[last + 1 :])
        shared = shared_writes_after(marks[last + 1 :])
        kept = self._copy(stored, kept_as, len(marks) - 1)
        kept.info.revision = stored.info.revision
        kept.info.metadata = dict(stored.info.metadata)
        kept.state = dict(stored.state)
        self._origins[kept_as] = ThreadOrigin(
            thread_id=kept_as,
            parent_thread_id=thread_id,
            checkpoint=index,
            kind="rewind",
            at=kept.info.created_at,
        )
        self._admit(kept_as, kept, keep=(thread_id,))  # not evicting the thread rewound
        back = self._copy(stored, thread_id, last)
        back.pending = _waiting_at(stored, marks[last].revision)
        withdrawn = [call_id for call_id in stored.pending if call_id not in back.pending]
        back.answered = {**stored.answered, **dict.fromkeys(withdrawn)}
        note = withdrawn_reason(withdrawal(index, kept_as)) or ""
        back.withdrawn = {**stored.withdrawn, **dict.fromkeys(withdrawn, note)}
        info = stored.info
        info.revision += 1
        info.updated_at = max(time.time(), info.updated_at)
        info.message_count = back.info.message_count
        info.result_count = back.info.result_count
        end = marks[last]
        back.marks.append(
            Mark(info.revision, 0, end.results, end.messages, None, info.updated_at, None, ())
        )
        self.decoded.forget(thread_id)
        back = dataclasses.replace(back, info=info, rewinds=stored.rewinds + 1)
        self._admit(thread_id, back, keep=(kept_as,))
        return RewindReport.model_construct(
            thread_id=thread_id,
            checkpoint=index,
            revision=info.revision,
            discarded_calls=count - marks[last].results,
            kept_as=kept_as,
            tool_calls_not_undone=tool_calls,
            shared_keys=shared,
            withdrawn=withdrawn,
        )

    async def origin(self, thread_id: str) -> ThreadOrigin | None:
        """Where a thread came from (a fork, or a rewind's keeping); None for any other."""
        check_id("thread_id", thread_id)
        await anyio.lowlevel.checkpoint()
        origin = self._origins.get(thread_id)
        return None if origin is None else origin.model_copy()


def _waiting_at(stored: Any, revision: int) -> dict[str, str]:
    """The calls `stored` waits on that a commit at or before `revision` stored: those of the
    checkpoints up to the one `revision` ends (`network.threads.pending`)."""
    current = stored.info.revision
    return {
        call_id: text
        for call_id, text in stored.pending.items()
        if stored_revision(text, current) <= revision
    }
