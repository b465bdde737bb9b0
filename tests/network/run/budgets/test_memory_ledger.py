"""`MemoryLedger`: holds and settlements in the process; a hold never settled is reclaimed as
spent (by a reservation that finds no room, by every one of a budget without caps, by a read
of the figures); concurrent reservations on one event loop never pass a cap."""

from __future__ import annotations

import anyio
import pytest

from network.run.budgets.ledger import Caps, Hold
from network.run.budgets.memory_ledger import MemoryLedger

pytestmark = pytest.mark.anyio

NOW = 1_000_000.0


async def test_a_hold_counts_until_it_is_settled_with_what_was_spent() -> None:
    ledger = MemoryLedger()
    caps = Caps(max_tokens=250)
    a, b = Hold("a", 100, 0.1, NOW + 60), Hold("b", 100, 0.1, NOW + 60)
    assert await ledger.reserve("k", a, caps, NOW) is None
    assert await ledger.reserve("k", b, caps, NOW) is None
    refused = await ledger.reserve("k", Hold("c", 100, 0.1, NOW + 60), caps, NOW)
    assert refused is not None and (refused.spent, refused.held) == (0, 200)
    await ledger.settle("k", a, 30, 0.05, 1, NOW)
    figures = await ledger.figures("k", NOW)
    assert (figures.tokens, figures.held_tokens, figures.requests) == (30, 100, 1)
    assert figures.held_requests == 1 and figures.cost_usd == 0.05
    assert await ledger.reserve("k", Hold("c", 100, 0.1, NOW + 60), caps, NOW) is None
    await ledger.settle("k", b, 0, 0.0, 0, NOW)  # a release
    await ledger.settle("k", b, 0, 0.0, 0, NOW)  # twice: nothing more
    figures = await ledger.figures("k", NOW)
    assert (figures.tokens, figures.held_tokens, figures.held_requests) == (30, 100, 1)
    assert (await ledger.figures("other")).tokens == 0


async def test_an_expired_hold_is_reclaimed_as_spent_when_room_is_short() -> None:
    ledger = MemoryLedger()
    caps = Caps(max_tokens=150)
    dead = Hold("dead", 100, 0.2, NOW + 10)
    assert await ledger.reserve("k", dead, caps, NOW) is None
    refused = await ledger.reserve("k", Hold("b", 100, 0.0, NOW + 70), caps, NOW + 5)
    assert refused is not None  # not expired yet: it still holds
    refused = await ledger.reserve("k", Hold("b", 100, 0.0, NOW + 70), caps, NOW + 10)
    assert refused is not None and refused.spent == 100  # reclaimed, counted as spent
    figures = await ledger.figures("k")
    assert (figures.tokens, figures.held_tokens, figures.requests) == (100, 0, 1)
    assert figures.cost_usd == 0.2
    await ledger.settle("k", dead, 7, 0.0, 1, NOW + 11)  # it was alive after all: no hold
    figures = await ledger.figures("k")
    assert figures.held_requests == 0
    # counted once: the reclaim counted what it held, more than the 7 tokens it spent
    assert (figures.tokens, figures.cost_usd, figures.requests) == (100, 0.2, 1)


async def test_a_request_that_spent_more_than_its_reclaimed_hold_adds_only_the_rest() -> None:
    ledger = MemoryLedger()
    slow = Hold("slow", 100, 0.2, NOW + 10)
    assert await ledger.reserve("k", slow, Caps(max_tokens=150), NOW) is None
    late = Hold("b", 100, 0.0, NOW + 70)
    assert await ledger.reserve("k", late, Caps(max_tokens=150), NOW + 10)  # refused: reclaims
    await ledger.settle("k", slow, 130, 0.5, 1, NOW + 11)  # reclaimed (100, 0.2), spent more
    figures = await ledger.figures("k")
    assert (figures.tokens, figures.cost_usd, figures.requests) == (130, 0.5, 1)


async def test_concurrent_reservations_never_pass_the_cap() -> None:
    ledger = MemoryLedger()
    caps = Caps(max_tokens=1000, max_requests=30)
    granted: list[str] = []

    async def one(i: int) -> None:
        mine = Hold(str(i), 90, 0.0, NOW + 60)
        if await ledger.reserve("k", mine, caps, NOW) is None:
            granted.append(str(i))
            await anyio.sleep(0.01)
            await ledger.settle("k", mine, 90, 0.0, 1, NOW)

    async with anyio.create_task_group() as group:
        for i in range(40):
            group.start_soon(one, i)
    assert len(granted) == 11  # 11 * 90 <= 1000 < 12 * 90
    assert (await ledger.figures("k")).tokens == 990


async def test_a_budget_without_caps_reclaims_an_expired_hold_at_its_next_reservation() -> None:
    """Never refused, it never reclaimed: a dead process's hold stayed held for ever."""
    ledger = MemoryLedger()
    assert await ledger.reserve("k", Hold("dead", 100, 0.2, NOW + 10), Caps(), NOW) is None
    assert await ledger.reserve("k", Hold("next", 5, 0.0, NOW + 70), Caps(), NOW + 11) is None
    figures = await ledger.figures("k", NOW + 11)
    assert (figures.tokens, figures.requests, figures.held_tokens, figures.held_requests) == (
        100,
        1,
        5,
        1,
    )


async def test_a_read_of_the_figures_reclaims_what_has_expired() -> None:
    ledger = MemoryLedger()
    caps = Caps(max_tokens=1_000)  # room to spare: no reservation would reclaim it
    assert await ledger.reserve("k", Hold("dead", 100, 0.2, NOW + 10), caps, NOW) is None
    held = await ledger.figures("k", NOW + 9)
    assert (held.tokens, held.held_tokens) == (0, 100)
    figures = await ledger.figures("k", NOW + 10)
    assert (figures.tokens, figures.cost_usd, figures.requests) == (100, 0.2, 1)
    assert (figures.held_tokens, figures.held_requests) == (0, 0)
