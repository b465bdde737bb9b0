"""`BudgetAccount`: a refusal is a `BudgetExceeded` naming the budget and the cap; a request
over `requests_per_minute` waits for the next window (up to `rate_wait`); holding on several
budgets is all or nothing."""

from __future__ import annotations

import time

import pytest

from network import BudgetExceeded, SharedBudget
from network.errors import ThreadStoreError
from network.run.budgets.account import BudgetAccount, release_all, reserve_all, settle_all
from network.run.budgets.memory_ledger import MemoryLedger

pytestmark = pytest.mark.anyio


def account(budget: SharedBudget, ledger: MemoryLedger | None = None) -> BudgetAccount:
    assert budget.key is not None
    return BudgetAccount(budget, budget.key, ledger or MemoryLedger())


async def test_a_refusal_names_the_budget_and_the_cap() -> None:
    tokens = account(SharedBudget("tenant:acme", max_tokens=100))
    await tokens.reserve(60, 0.0)
    with pytest.raises(BudgetExceeded) as refused:
        await tokens.reserve(50, 0.0)
    error = refused.value
    assert (error.budget, error.limit, error.value, error.spent, error.held, error.asked) == (
        "tenant:acme",
        "max_tokens",
        100,
        0,
        60,
        50,
    )
    assert str(error) == (
        "budget 'tenant:acme': max_tokens=100 leaves no room (this request asked for 50 "
        "tokens; 0 spent, 60 held by requests under way)"
    )


async def test_over_the_per_minute_rate_a_request_waits_for_the_next_window() -> None:
    ledger = MemoryLedger()
    slow = account(SharedBudget("t", requests_per_minute=2, rate_wait=5), ledger)
    first = await slow.reserve(1, 0.0)
    await slow.reserve(1, 0.0)
    # the window started at the first request: move it back so that it ends in 0.3 s
    figures = ledger._accounts["t"].figures
    figures.window_start = time.time() - 59.7
    started = time.monotonic()
    await slow.reserve(1, 0.0)
    assert 0.2 < time.monotonic() - started < 3
    assert (await ledger.figures("t")).window_requests == 1
    await slow.settle(first, 1, 0.0, 1)


async def test_past_rate_wait_the_request_is_refused_with_when_to_retry() -> None:
    impatient = account(SharedBudget("t", requests_per_minute=1, rate_wait=0.5))
    await impatient.reserve(1, 0.0)
    with pytest.raises(BudgetExceeded, match="requests_per_minute=1") as refused:
        await impatient.reserve(1, 0.0)
    assert refused.value.retry_after is not None and 55 < refused.value.retry_after <= 60


async def test_holding_on_several_budgets_is_all_or_nothing() -> None:
    ledger = MemoryLedger()
    roomy = account(SharedBudget("user:ann", max_tokens=1000), ledger)
    tight = account(SharedBudget("tenant:acme", max_tokens=100), ledger)
    held = await reserve_all([roomy, tight], [(80, 0.0), (80, 0.0)])
    with pytest.raises(BudgetExceeded, match="tenant:acme"):
        await reserve_all([roomy, tight], [(80, 0.0), (80, 0.0)])
    assert (await ledger.figures("user:ann")).held_tokens == 80  # the second try gave back
    await settle_all(held, 50, 0.01, 1)
    for key in ("user:ann", "tenant:acme"):
        figures = await ledger.figures(key)
        assert (figures.tokens, figures.held_tokens, figures.requests) == (50, 0, 1)
    again = await reserve_all([roomy], [(10, 0.0)])
    await release_all(again)
    assert (await ledger.figures("user:ann")).tokens == 50


class Failing(MemoryLedger):
    """A ledger whose store is down when settling."""

    async def settle(self, *args: object) -> None:
        raise ThreadStoreError("the thread store (sql) failed in settle", operation="settle")


@pytest.mark.parametrize("settling", ["settle", "release"])
async def test_a_ledger_that_fails_to_settle_keeps_no_other_hold(settling: str) -> None:
    down, up = Failing(), MemoryLedger()
    held = await reserve_all(
        [account(SharedBudget("tenant:acme"), down), account(SharedBudget("user:ann"), up)],
        [(80, 0.0), (80, 0.0)],
    )
    with pytest.raises(ThreadStoreError):
        await (settle_all(held, 50, 0.0, 1) if settling == "settle" else release_all(held))
    figures = await up.figures("user:ann")  # settled all the same
    assert figures.held_tokens == 0 and figures.tokens == (50 if settling == "settle" else 0)
