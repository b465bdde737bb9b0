"""Run leases (`network.threads.leases`) on memory, SQLite and PostgreSQL: one holder at a
time, decided by the store, across store objects that stand for separate processes."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from network.errors import ConfigurationError, InvalidIdError
from network.history.messages import UserMessage
from network.threads import Commit, ThreadStore
from network.threads.leases import MemoryLeases, ReadClaim, ReadingLeases, RunLeases
from network.threads.store_leases import run_leases

pytestmark = pytest.mark.anyio


def fresh(name: str) -> str:
    """A thread id no earlier test used (PostgreSQL is shared by the session's tests)."""
    return f"{name}-{uuid.uuid4().hex[:12]}"


async def test_one_holder_at_a_time(open_store: Callable[[], ThreadStore]) -> None:
    here, there = run_leases(open_store()), run_leases(open_store())
    t1, t2 = fresh("t1"), fresh("t2")
    assert isinstance(here, RunLeases)
    assert await here.claim(t1, "run-a", 30)
    assert not await there.claim(t1, "run-b", 30)
    assert await here.claim(t1, "run-a", 30)  # its own again: still its
    assert await there.claim(t2, "run-b", 30)  # another thread is free
    assert not await there.renew(t1, "run-b", 30)
    assert await here.renew(t1, "run-a", 30)
    await there.release(t1, "run-b")  # not its lease: nothing happens
    assert not await there.claim(t1, "run-b", 30)
    await here.release(t1, "run-a")
    assert await there.claim(t1, "run-b", 30)


async def test_an_expired_lease_is_taken_over(open_store: Callable[[], ThreadStore]) -> None:
    crashed, alive = run_leases(open_store()), run_leases(open_store())
    t1 = fresh("t1")
    assert await crashed.claim(t1, "dead-run", 0.05)
    await anyio.sleep(0.1)
    assert await alive.claim(t1, "new-run", 30)
    assert not await crashed.renew(t1, "dead-run", 30)  # it learns it lost the lease


async def test_concurrent_claims_have_exactly_one_winner(
    open_store: Callable[[], ThreadStore],
) -> None:
    holders = [run_leases(open_store()) for _ in range(6)]
    contested = fresh("contested")
    won: list[str] = []

    async def claim(index: int, leases: Any) -> None:
        if await leases.claim(contested, f"run-{index}", 30):
            won.append(f"run-{index}")

    async with anyio.create_task_group() as group:
        for index, leases in enumerate(holders):
            group.start_soon(claim, index, leases)
    assert len(won) == 1


async def test_bad_input_is_refused(open_store: Callable[[], ThreadStore]) -> None:
    leases = run_leases(open_store())
    t1 = fresh("t1")
    for ttl in (0, -1, float("nan"), float("inf"), True, "30"):
        with pytest.raises(ConfigurationError, match="ttl"):
            await leases.claim(t1, "run-a", ttl)  # type: ignore[arg-type]
    with pytest.raises(InvalidIdError):
        await leases.claim("", "run-a", 30)
    assert await leases.claim(t1, "run-a", 30)  # nothing was taken by the refusals


async def test_a_claim_that_reads_checks_the_owner_and_reads_what_it_protects(
    open_store: Callable[[], ThreadStore],
) -> None:
    """`claim_reading` (the SQL store's leases): another app's or user's thread is refused
    without touching its lease; a taken lease comes with the thread as it now is."""
    store = open_store()
    here, there = run_leases(store), run_leases(open_store())  # two processes
    if not isinstance(here, ReadingLeases):
        pytest.skip("this store's leases claim without reading")
    t1 = fresh("t1")
    new = await here.claim_reading(t1, "run-a", 30, app_name="app", user_id="u1")
    assert new == ReadClaim(taken=True, foreign=False, existed=False, thread=None)
    await here.release(t1, "run-a")
    await store.create_thread(t1, app_name="app", user_id="u1")
    await store.append_results(t1, Commit(revision=0, messages=[UserMessage(content="hi")]))
    for app, user in (("app", "u2"), ("other", "u1")):
        foreign = await there.claim_reading(t1, "run-x", 30, app_name=app, user_id=user)
        assert foreign == ReadClaim(taken=False, foreign=True, existed=True)
    mine = await there.claim_reading(t1, "run-b", 30, app_name="app", user_id="u1")
    assert mine.taken and mine.existed and not mine.foreign and mine.thread is not None
    assert mine.thread.revision == 1 and [m.content for m in mine.thread.messages] == ["hi"]
    busy = await here.claim_reading(t1, "run-c", 30, app_name="app", user_id="u1")
    assert busy == ReadClaim(taken=False, foreign=False, existed=True)
    with pytest.raises(InvalidIdError):
        await here.claim_reading(t1, "run-c", 30, app_name="app", user_id="bad\x00user")
    await there.release(t1, "run-b")
    assert (await here.claim_reading(t1, "run-c", 30, app_name="app", user_id="u1")).taken


def test_a_store_may_bring_its_own_leases() -> None:
    own = MemoryLeases()

    class Custom:
        def run_leases(self) -> Any:
            return own

    class Plain:
        pass

    assert run_leases(Custom()) is own
    plain = Plain()
    assert isinstance(run_leases(plain), MemoryLeases) and run_leases(plain) is run_leases(plain)

    class Broken:
        def run_leases(self) -> Any:
            return object()

    with pytest.raises(ConfigurationError, match="run_leases"):
        run_leases(Broken())


async def test_a_claim_that_takes_over_an_expired_lease_reads_the_last_commits(
    open_store: Callable[[], ThreadStore],
) -> None:
    """A claim that reads in its own statement (PostgreSQL) does so only where no lease was
    there; taking over one that expired (its holder crashed), the thread is read after the
    claim, with every commit the old holder made, also those after this process last read
    it."""
    store, crashed_store = open_store(), open_store()
    here, crashed = run_leases(store), run_leases(crashed_store)
    if not isinstance(here, ReadingLeases):
        pytest.skip("this store's leases claim without reading")
    t1 = fresh("t1")
    await store.create_thread(t1, app_name="app", user_id="u1")
    first = await here.claim_reading(t1, "run-a", 30, app_name="app", user_id="u1")
    assert first.thread is not None and first.thread.revision == 0  # now cached here
    await here.release(t1, "run-a")
    assert await crashed.claim(t1, "dead-run", 0.05)
    for revision, text in enumerate(("one", "two")):
        commit = Commit(revision=revision, messages=[UserMessage(content=text)])
        await crashed_store.append_results(t1, commit)
    await anyio.sleep(0.1)
    taken = await here.claim_reading(t1, "run-b", 30, app_name="app", user_id="u1")
    assert taken.taken and taken.thread is not None and taken.thread.revision == 2
    assert [m.content for m in taken.thread.messages] == ["one", "two"]
    await here.release(t1, "run-b")
    again = await here.claim_reading(t1, "run-c", 30, app_name="app", user_id="u1")
    assert again.thread is not None and [m.content for m in again.thread.messages] == [
        "one",
        "two",
    ]
