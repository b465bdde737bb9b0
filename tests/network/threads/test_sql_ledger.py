"""Shared budgets on SQLite and PostgreSQL (`network.threads.sql_ledger`): separate store
objects stand for separate processes; the conditional statement never lets them pass a cap
together; a hold a process never settled is reclaimed as spent."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest

from network.run.budgets.ledger import Caps, Hold
from network.threads import SQLStore
from network.threads.sql_ledger import SQLLedger

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["sqlite", "postgres"])
async def ledgers(
    request: pytest.FixtureRequest, tmp_path: Path, anyio_backend: str
) -> AsyncIterator[Callable[[], SQLLedger]]:
    """Makes ledgers on one database, each on a store of its own (a process each)."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'budgets.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    stores: list[SQLStore] = []

    def make() -> SQLLedger:
        store = SQLStore(url)
        stores.append(store)
        return SQLLedger(store)

    try:
        yield make
    finally:
        for store in stores:
            await store.close()


def key() -> str:
    return f"tenant:{uuid.uuid4().hex[:8]}"  # the PostgreSQL server is shared by the tests


def hold(tokens: int, seconds: float = 60.0, cost: float = 0.0) -> Hold:
    return Hold(uuid.uuid4().hex, tokens, cost, time.time() + seconds)


async def test_holds_and_settlements_are_shared_by_stores(
    ledgers: Callable[[], SQLLedger],
) -> None:
    one, two = ledgers(), ledgers()
    name, caps = key(), Caps(max_tokens=250, max_cost_usd=1.0)
    first = hold(100, cost=0.25)
    assert await one.reserve(name, first, caps, time.time()) is None
    assert await two.reserve(name, hold(100, cost=0.25), caps, time.time()) is None
    refused = await two.reserve(name, hold(100), caps, time.time())
    assert refused is not None and (refused.limit, refused.spent, refused.held) == (
        "max_tokens",
        0,
        200,
    )
    await one.settle(name, first, 30, 0.1, 1, time.time())
    await two.settle(name, first, 0, 0.0, 0, time.time())  # settled once: no hold left
    figures = await two.figures(name)
    assert (figures.tokens, figures.requests, figures.held_tokens, figures.held_requests) == (
        30,
        1,
        100,
        1,
    )
    assert figures.cost_usd == pytest.approx(0.1) and figures.held_cost_usd == 0.25
    assert (await one.figures(key())).tokens == 0  # a key never used


async def test_a_hold_never_settled_is_reclaimed_as_spent(
    ledgers: Callable[[], SQLLedger],
) -> None:
    dead, alive = ledgers(), ledgers()
    name, caps = key(), Caps(max_tokens=150)
    now = time.time()
    never_settled = hold(100, seconds=0.2)
    assert await dead.reserve(name, never_settled, caps, now) is None
    assert await alive.reserve(name, hold(100), caps, now) is not None  # still held
    # past its expiry by the callers' clock (which `reserve` is given), however long the
    # statements above took on a loaded machine
    later = never_settled.expires_at + 0.1
    refused = await alive.reserve(name, hold(100), caps, later)
    assert refused is not None and (refused.spent, refused.held) == (100, 0)
    figures = await alive.figures(name)
    assert (figures.tokens, figures.requests, figures.held_requests) == (100, 1, 0)
    assert await alive.reserve(name, hold(50), caps, later) is None


async def test_concurrent_reservations_of_many_stores_never_pass_the_cap(
    ledgers: Callable[[], SQLLedger],
) -> None:
    name, caps = key(), Caps(max_tokens=1000, max_requests=100)
    stores = [ledgers() for _ in range(4)]
    granted: list[str] = []

    async def one(ledger: SQLLedger) -> None:
        mine = hold(90)
        if await ledger.reserve(name, mine, caps, time.time()) is None:
            granted.append(mine.id)
            await anyio.sleep(0.01)
            await ledger.settle(name, mine, 90, 0.0, 1, time.time())

    async with anyio.create_task_group() as group:
        for i in range(24):
            group.start_soon(one, stores[i % 4])
    assert len(granted) == 11  # 11 * 90 <= 1000 < 12 * 90, whoever asked first
    figures = await stores[0].figures(name)
    assert (figures.tokens, figures.requests, figures.held_tokens) == (990, 11, 0)


async def test_the_per_minute_window(ledgers: Callable[[], SQLLedger]) -> None:
    ledger = ledgers()
    name, caps = key(), Caps(requests_per_minute=2)
    now = time.time()
    assert await ledger.reserve(name, hold(1), caps, now) is None
    assert await ledger.reserve(name, hold(1), caps, now + 1) is None
    refused = await ledger.reserve(name, hold(1), caps, now + 30)
    assert refused is not None and refused.limit == "requests_per_minute"
    assert refused.retry_after == pytest.approx(30)
    assert await ledger.reserve(name, hold(1), caps, now + 60) is None  # a new window
    figures = await ledger.figures(name)
    assert (figures.window_start, figures.window_requests) == (pytest.approx(now + 60), 1)


@pytest.mark.parametrize(("spent", "counted"), [(30, (100, 0.25)), (130, (130, 0.5))])
async def test_a_request_settled_after_its_hold_was_reclaimed_counts_once(
    ledgers: Callable[[], SQLLedger], spent: int, counted: tuple[int, float]
) -> None:
    """A request slower than `hold_seconds` (its process alive) has its hold reclaimed as
    spent by another process that found no room; its settlement then adds only what it spent
    beyond that hold: one request, not two, counted once."""
    slow, other = ledgers(), ledgers()
    name, caps = key(), Caps(max_tokens=150)
    mine = hold(100, seconds=0.2, cost=0.25)
    assert await slow.reserve(name, mine, caps, time.time()) is None
    await anyio.sleep(0.3)
    refused = await other.reserve(name, hold(100), caps, time.time())
    assert refused is not None and refused.spent == 100  # reclaimed, counted as spent
    await slow.settle(name, mine, spent, 0.5 if spent > 100 else 0.1, 1, time.time())
    figures = await other.figures(name)
    assert (figures.tokens, figures.cost_usd, figures.requests) == (*counted, 1)
    assert (figures.held_tokens, figures.held_requests) == (0, 0)
