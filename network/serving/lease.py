"""`HeldLease`: the run lease an admitted run holds on its thread, and what losing it does.

One run per thread across processes is the store's lease (`network.threads.leases`): a row
naming the run and when it expires. A run keeps its lease by renewing it every third of its
time to live (`keep`, run beside the run). A process that stops for longer than that (paused
by SIGSTOP or a debugger, a VM frozen, a machine cut off from the database) loses the lease,
and another process may take the thread and run on it. The paused run must then stop, not
carry on with its next tool call when it wakes: its commits would be refused (the thread moved
on), but its tool's side effects would happen twice.

So the lease is lost, by this process's own clock, as soon as its expiry passes unrenewed
(`expired`), and for good when a renewal finds another holder. Losing it (`lose`) logs
`serving.lease_lost` and cancels the run (`guarding`): the work in flight stops at its next
await, and the run ends with `LeaseLostError`. Every event the run emits passes `committing`
first, which checks the clock: a run that wakes up past its lease is stopped at its first
event (its model's answer, a tool call about to start), before it starts anything more, and
commits nothing more. User code that is running when the process pauses (a tool between two
awaits) cannot be stopped in the middle; it is cancelled at its next await.

The cancellation never lands in the middle of an event's delivery: `committing` opens each
event and `after_event`, the run's last sink, closes it. A lease lost meanwhile cancels the
run once the event reached every sink, and the cancellation is raised right there, at the
end of that event, before the run does anything after it (a tool call about to start, even
one that is plain Python with no await to be cancelled at). Once the lease is lost, the run's
other sinks (`delivering`: the client's) get every event it still emits whole. A client thus
never misses an event whose closing counterpart the run's end sends (a TOOL_CALL_END without
its TOOL_CALL_START, a STEP_FINISHED without its STEP_STARTED).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import anyio

from network.errors import LeaseLostError
from network.logger import LazyLogger
from network.run.emitter import EventSink
from network.threads.leases import RunLeases

log = LazyLogger("agent_network.serving")


class HeldLease:
    """The lease `holder` holds on `thread_id` since `granted_at` (seconds since the epoch,
    taken before the claim was sent, so the expiry counted here is never later than the
    store's)."""

    def __init__(
        self,
        leases: RunLeases,
        thread_id: str,
        holder: str,
        ttl: float,
        *,
        granted_at: float,
        run_id: str | None = None,
    ) -> None:
        self.leases = leases
        self.thread_id = thread_id
        self.holder = holder
        self.ttl = ttl
        self.run_id = run_id
        self.expires_at = granted_at + ttl
        self.lost = False
        self._scope: anyio.CancelScope | None = None
        self._delivering = 0  # events between `committing` and `after_event`
        self._stopped = False  # the run was cancelled at the end of an event
        self.renewing = False  # `keep` is waiting for the store to renew the lease

    def expired(self) -> bool:
        """Whether the lease is lost: taken by another holder, or run out by this process's
        clock without a renewal (then it is lost from now on: another process may hold it)."""
        if self.lost:
            return True
        if time.time() < self.expires_at:
            return False
        self.lose("expired")
        return True

    def lose(self, reason: str) -> None:
        """Mark the lease lost (once), log it, and cancel the run that held it."""
        if self.lost:
            return
        self.lost = True
        log.warning(
            "serving.lease_lost", thread_id=self.thread_id, run_id=self.run_id, reason=reason
        )
        if not self._delivering:  # else `after_event` cancels, once the event is delivered
            self._cancel()

    def _cancel(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    async def keep(self, done: anyio.Event | None = None) -> None:
        """Renew the lease every third of its time to live, until cancelled or lost, or until
        `done` is set (run it in a task beside the run). A store that fails to answer is tried
        again; the lease is lost when its expiry passes meanwhile.

        A run that ends sets `done` rather than cancelling the task: the task then returns
        from its wait, where a cancellation is delivered again and again until it lands
        (anyio's), which cost a served run more than its lease's release."""
        while not self.lost:
            delay = max(0.0, min(self.ttl / 3, self.expires_at - time.time()))
            if done is None:
                await anyio.sleep(delay)
            else:
                with anyio.move_on_after(delay):
                    await done.wait()
                if done.is_set():
                    return
            if self.expired():
                return
            asked = time.time()
            self.renewing = True
            try:
                kept = await self.leases.renew(self.thread_id, self.holder, self.ttl)
            except Exception as error:  # the store is down: try again, the clock decides
                log.warning(
                    "serving.lease_renew_failed", thread_id=self.thread_id, error=repr(error)
                )
                continue
            finally:
                self.renewing = False
            if not kept:
                self.lose("taken")
                return
            self.expires_at = asked + self.ttl

    async def release(self) -> None:
        """End the lease (shielded: also when the run is being cancelled). Releasing a lease
        another holder took changes nothing."""
        with anyio.CancelScope(shield=True):
            try:
                await self.leases.release(self.thread_id, self.holder)
            except Exception as error:  # it expires on its own
                log.warning(
                    "serving.lease_release_failed", thread_id=self.thread_id, error=repr(error)
                )

    def committing(self, sink: EventSink) -> EventSink:
        """`sink` (the run's commits) behind the lease, to put first among the run's sinks
        (with `after_event` last): each event checks the lease, and once it is lost nothing
        more reaches `sink`."""

        async def guarded(event: Any) -> None:
            self._delivering += 1
            if not self.expired():
                await sink(event)

        return guarded

    def delivering(self, sink: EventSink) -> EventSink:
        """`sink` (one of the run's own: the client's), delivering whole every event the run
        still emits once the lease is lost (its closing events, and the one under way when
        the cancellation came), so the cancellation lands in the run's own work, never
        between an event's bookkeeping and its delivery."""

        async def delivered(event: Any) -> None:
            if not self.lost:
                await sink(event)
                return
            with anyio.CancelScope(shield=True):
                await sink(event)

        return delivered

    async def after_event(self, event: Any) -> None:
        """The run's last sink: the event was delivered; a lease lost meanwhile now cancels
        the run, right here, before the run does anything after this event (a tool that is
        plain Python would otherwise run before the cancellation reached an await)."""
        self._delivering = max(0, self._delivering - 1)
        if self.lost and not self._delivering and not self._stopped:
            self._stopped = True
            self._cancel()
            await anyio.lowlevel.checkpoint()  # raises the cancellation (unless shielded)

    @contextlib.contextmanager
    def guarding(self) -> Iterator[None]:
        """Run the block (the run) under the lease: cancelled when the lease is lost, which
        then raises `LeaseLostError` here."""
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self.lost:
                    scope.cancel()
                try:
                    yield
                finally:
                    self._scope = None
        except Exception as error:
            if self.lost:
                raise self.error() from error
            raise
        if self.lost:
            raise self.error()

    def error(self) -> LeaseLostError:
        """The error a run stopped by losing this lease ends with."""
        return LeaseLostError(
            f"run {self.run_id!r} lost its lease on thread {self.thread_id!r} (it expired "
            "unrenewed, so another run may hold the thread) and was stopped before doing "
            "anything more",
            thread_id=self.thread_id,
            run_id=self.run_id,
        )
