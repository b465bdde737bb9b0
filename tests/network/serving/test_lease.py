"""`HeldLease`: a run keeps its thread's lease while it runs, and stops when it loses it."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from network.errors import LeaseLostError
from network.serving import lease as lease_module
from network.serving.lease import HeldLease
from network.threads.leases import MemoryLeases

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


async def held(leases: MemoryLeases, ttl: float, holder: str = "me") -> HeldLease:
    asked = lease_module.time.time()  # the lease's clock (a test may move it by hand)
    assert await leases.claim("t1", holder, ttl)
    return HeldLease(leases, "t1", holder, ttl, granted_at=asked, run_id="r1")


async def test_a_kept_lease_outlives_its_ttl_and_is_released() -> None:
    leases = MemoryLeases()
    # renewed every 0.5 s: a renewal may come up to 1 s late on a loaded machine (a ttl of
    # 0.15 s left 0.1 s, and the lease ran out)
    lease = await held(leases, 1.5)
    async with anyio.create_task_group() as group:
        group.start_soon(lease.keep)
        await anyio.sleep(3.2)  # over twice its ttl
        assert not await leases.claim("t1", "another", 1)  # still ours
        assert not lease.expired()
        group.cancel_scope.cancel()
    await lease.release()
    assert await leases.claim("t1", "another", 1)


async def test_a_keeper_told_the_run_ended_returns_without_being_cancelled() -> None:
    """A run that ends sets the keeper's event: the keeper returns from its wait on its own
    (no cancellation to deliver, which anyio retries on every turn of the loop until it lands)
    and renews nothing more."""
    leases = MemoryLeases()
    lease = await held(leases, 30)
    done = anyio.Event()
    ended: list[str] = []

    async def keeper() -> None:
        await lease.keep(done)
        ended.append("returned")

    async with anyio.create_task_group() as group:
        group.start_soon(keeper)
        await anyio.sleep(0.05)
        done.set()
        with anyio.fail_after(5):
            while not ended:
                await anyio.sleep(0.01)
    assert ended == ["returned"] and not lease.lost
    await lease.release()
    assert await leases.claim("t1", "another", 1)


async def test_a_lease_taken_by_another_holder_cancels_the_run() -> None:
    leases = MemoryLeases()
    lease = await held(leases, 0.3)
    steps: list[str] = []
    with pytest.raises(LeaseLostError) as raised, lease.guarding():
        async with anyio.create_task_group() as group:
            group.start_soon(lease.keep)
            await leases.release("t1", "me")  # as if it expired and was taken
            assert await leases.claim("t1", "another", 30)
            steps.append("before")
            await anyio.sleep(2)  # the in-flight work, cut at the renewal
            steps.append("after")
    assert steps == ["before"]
    assert raised.value.thread_id == "t1" and raised.value.run_id == "r1"
    assert "lost its lease on thread 't1'" in str(raised.value)


async def test_a_lease_run_out_by_the_clock_stops_the_run_at_its_next_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The lease's clock, moved by hand: a real 0.05 s lease could run out before the first
    # event on a loaded machine, and the first event is the one that must be committed.
    clock = [time.time()]
    monkeypatch.setattr(lease_module, "time", SimpleNamespace(time=lambda: clock[0]))
    leases = MemoryLeases()
    lease = await held(leases, 30)
    committed: list[Any] = []
    delivered: list[Any] = []

    async def commit(event: Any) -> None:
        committed.append(event)

    async def client(event: Any) -> None:
        await anyio.sleep(0)  # a checkpoint, where a cancellation would land
        delivered.append(event)

    sinks = [lease.committing(commit), lease.delivering(client), lease.after_event]

    async def emit(event: str) -> None:
        for sink in sinks:
            await sink(event)

    work: list[str] = []
    with pytest.raises(LeaseLostError), lease.guarding():
        await emit("first")
        clock[0] += 31  # the process is paused past its lease (no await: no renewal)
        await emit("tool call starts")  # noticed here: delivered whole, not committed,
        work.append("tool ran")  # and the run is stopped at its end: a plain tool never runs
    assert committed == ["first"]
    assert delivered == ["first", "tool call starts"]
    assert work == [] and lease.lost
    await lease.delivering(client)("closing")  # what the run's end still sends is delivered
    assert delivered[-1] == "closing"


async def test_a_lost_lease_stays_lost_and_its_renewal_stops() -> None:
    leases = MemoryLeases()
    lease = await held(leases, 0.05)
    time.sleep(0.1)
    with anyio.fail_after(2):
        await lease.keep()  # returns at once: expired by the clock, not renewed
    assert lease.expired() and lease.lost
