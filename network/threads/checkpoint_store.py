"""`CheckpointStore`: what a thread store adds to `ThreadStore` to offer time travel.

`MemoryStore` and `SQLStore` implement it. It is a protocol of its own, beside `ThreadStore`,
so a store written against `ThreadStore` alone stays one; `network.fork` / `network.rewind` on
such a store raise `TimeTravelError` naming it.

Contract (the conformance tests in tests/network/threads check it on every store):

- A checkpoint is a committed agent call, numbered like `thread.results`; negative indexes
  count from the end, a `Checkpoint` stands for its index. What it stands for is described in
  `network.threads.checkpoint_data`. A missing thread reads as None; a missing checkpoint is
  `CheckpointNotFoundError`.
- `state_at` reads what is stored: each thread key's last value at the checkpoint's revision,
  the conversation, calls and summaries up to it. It decodes nothing it does not return.
- `fork_thread` makes, in one transaction, a new thread of the source's app and user whose
  records, thread keys and checkpoints are the source's up to the checkpoint, at the
  checkpoint's revision; then `state` (thread keys' JSON texts, already validated) is
  committed on it as one more commit. It records its origin. The source is not changed.
- `rewind_thread` moves a thread back to a checkpoint in one transaction: first the thread as
  it was is copied, whole, to a new thread (`kept_as`, its origin naming the rewind), then the
  calls, messages, summaries and key values after the checkpoint leave the thread and its
  revision goes up by one (so a run that loaded it before fails at its next commit).
  Nothing is deleted that `kept_as` does not hold.
- Both keep the current `user:` / `app:` values (they are shared with other threads) and report
  the shared keys written after the checkpoint.
- A pending call (approval, client tool call) belongs to the checkpoint whose commits stored it
  (`PendingCall.to_text(revision)`). A fork waits on the source's calls that still wait and
  belong to the checkpoint or an earlier one, and on nothing else. A rewind withdraws the
  waiting calls of later checkpoints (answered, with `pending_claims.withdrawal` as the answer
  and no run: a claim is `AlreadyAnsweredError`) and lists them in `RewindReport.withdrawn`;
  `kept_as` waits on nothing. No answered call becomes answerable again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from network.threads.checkpoint_data import (
    Checkpoint,
    CheckpointState,
    ForkResult,
    RewindReport,
    ThreadOrigin,
)


@runtime_checkable
class CheckpointStore(Protocol):
    """A thread store that keeps checkpoints. See the module docstring for the contract."""

    async def checkpoints(self, thread_id: str) -> list[Checkpoint] | None:
        """The thread's checkpoints, oldest first; None for a missing thread."""
        ...

    async def state_at(
        self, thread_id: str, checkpoint: int | Checkpoint
    ) -> CheckpointState | None:
        """The thread as it was at `checkpoint`; None for a missing thread."""
        ...

    async def fork_thread(
        self,
        thread_id: str,
        *,
        at: int | Checkpoint,
        new_thread_id: str,
        state: Mapping[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ForkResult:
        """A new thread `new_thread_id` starting from `thread_id` at `at`, plus `state`."""
        ...

    async def rewind_thread(
        self, thread_id: str, *, to: int | Checkpoint, kept_as: str
    ) -> RewindReport:
        """Move `thread_id` back to `to`, keeping the thread as it was as `kept_as`."""
        ...

    async def origin(self, thread_id: str) -> ThreadOrigin | None:
        """Where a thread came from (a fork, or a rewind's keeping); None for any other."""
        ...


@dataclass(frozen=True, slots=True)
class ForkRequest:
    """A `fork_thread` call as a store's `_fork_thread` gets it (`state` and `metadata` are
    copies of the caller's)."""

    thread_id: str
    at: int | Checkpoint
    new_thread_id: str
    state: dict[str, str]
    metadata: dict[str, Any] | None

    def origin(self, checkpoint: int, at: float) -> ThreadOrigin:
        """The fork's origin: the source at the checkpoint numbered `checkpoint`, at `at`."""
        return ThreadOrigin(
            thread_id=self.new_thread_id,
            parent_thread_id=self.thread_id,
            checkpoint=checkpoint,
            kind="fork",
            at=at,
        )


class CheckpointBase:
    """What the ready stores' time travel shares: `fork_thread`, over a store's
    `_fork_thread`."""

    async def fork_thread(
        self,
        thread_id: str,
        *,
        at: int | Checkpoint,
        new_thread_id: str,
        state: Mapping[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ForkResult:
        """`thread_id` forked at `at` into the new thread `new_thread_id` (see the module
        docstring); `state`: thread keys' JSON texts committed on the fork."""
        copied = None if metadata is None else dict(metadata)
        request = ForkRequest(thread_id, at, new_thread_id, dict(state or {}), copied)
        return await self._fork_thread(request)

    async def _fork_thread(self, request: ForkRequest) -> ForkResult:
        raise NotImplementedError
