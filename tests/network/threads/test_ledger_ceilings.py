"""A ledger counts no further than its ceilings (`network.run.budgets.ledger`: `LEDGER_TOKENS`,
`LEDGER_COST_USD`), on each ledger: in memory, SQLite and PostgreSQL.

Before, an uncapped key fed absurd figures (a model of one's own reporting them, an absurd
price) reached PostgreSQL's "bigint out of range" (a `ThreadStoreError` at the settlement,
once the request was paid, its hold left unsettled), turned SQLite's figure into an inexact
float, or made the held cost NaN, which SQLite keeps as NULL (the settlement failed).
Now a settlement stops at the ceiling, and a hold past it is refused, naming the ledger."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agents import Agent
from agents.models.base import ModelRequest, ModelResponse
from agents.models.price import Price
from network import BudgetExceeded, ModelError, Network, SharedBudget
from network.history.messages import AssistantMessage
from network.history.results import Usage
from network.run.budgets.ledger import LEDGER_COST_USD, LEDGER_TOKENS, Caps, Hold, Ledger
from network.run.budgets.memory_ledger import MemoryLedger
from network.threads import MemoryStore, SQLStore, budget_figures
from network.threads.sql_ledger import SQLLedger

pytestmark = pytest.mark.anyio

UNCAPPED = Caps()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'budgets.db'}"
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return None


@pytest.fixture
async def ledger(store_url: str | None, anyio_backend: str) -> AsyncIterator[Ledger]:
    if store_url is None:
        yield MemoryLedger()
        return
    store = SQLStore(store_url)
    try:
        yield SQLLedger(store)
    finally:
        await store.close()


def key() -> str:
    return f"tenant:{uuid.uuid4().hex[:8]}"  # the PostgreSQL server is shared by the tests


def hold(tokens: int, cost: float = 0.0, seconds: float = 60.0) -> Hold:
    return Hold(uuid.uuid4().hex, tokens, cost, time.time() + seconds)


async def test_spending_past_the_ceiling_stops_there_and_the_full_key_refuses(
    ledger: Ledger,
) -> None:
    name, first = key(), hold(10)
    assert await ledger.reserve(name, first, UNCAPPED, time.time()) is None
    # a figure a BIGINT still holds, but one more request's would not
    await ledger.settle(name, first, 2**63 - 6, 0.0, 1, time.time())
    figures = await ledger.figures(name)
    assert (figures.tokens, figures.held_tokens, figures.requests) == (LEDGER_TOKENS, 0, 1)
    refused = await ledger.reserve(name, hold(10), UNCAPPED, time.time())
    assert refused is not None
    assert (refused.limit, refused.value, refused.spent, refused.asked) == (
        "ledger_tokens",
        LEDGER_TOKENS,
        LEDGER_TOKENS,
        10,
    )
    after = await ledger.figures(name)
    assert (after.tokens, after.held_tokens, after.held_requests) == (LEDGER_TOKENS, 0, 0)


async def test_a_hold_past_the_ceiling_is_refused_whatever_the_caps(ledger: Ledger) -> None:
    name = key()
    for caps in (UNCAPPED, Caps(max_tokens=2**53 - 1)):
        refused = await ledger.reserve(name, hold(2**70), caps, time.time())
        assert refused is not None and refused.asked == 2**70
    assert (await ledger.figures(name)).held_tokens == 0


@pytest.mark.parametrize("cost", [math.inf, math.nan, 2e300])
async def test_a_hold_of_no_finite_cost_is_refused_and_holds_nothing(
    ledger: Ledger, cost: float
) -> None:
    name = key()
    refused = await ledger.reserve(name, hold(10, cost=cost), UNCAPPED, time.time())
    assert refused is not None and refused.limit == "ledger_cost_usd"
    figures = await ledger.figures(name)
    assert (figures.held_tokens, figures.held_cost_usd, figures.held_requests) == (0, 0.0, 0)


async def test_a_cost_settled_past_the_ceiling_stops_there(ledger: Ledger) -> None:
    name = key()
    for _ in range(2):  # 2e308 would be infinity
        held = hold(10)
        assert await ledger.reserve(name, held, Caps(max_tokens=1000), time.time()) is None
        await ledger.settle(name, held, 5, 1e308, 1, time.time())
    figures = await ledger.figures(name)
    assert (figures.cost_usd, figures.tokens, figures.held_cost_usd) == (LEDGER_COST_USD, 10, 0)


async def test_a_reclaimed_hold_adds_no_further_than_the_ceiling(ledger: Ledger) -> None:
    name = key()
    lost = hold(100, seconds=0.0)  # its process died: reclaimed at the next refusal
    assert await ledger.reserve(name, lost, UNCAPPED, time.time()) is None
    spender = hold(5)
    assert await ledger.reserve(name, spender, UNCAPPED, time.time()) is None
    await ledger.settle(name, spender, LEDGER_TOKENS - 50, 0.0, 1, time.time())
    refused = await ledger.reserve(name, hold(1), UNCAPPED, time.time() + 1)
    assert refused is not None and refused.limit == "ledger_tokens"
    figures = await ledger.figures(name)
    assert (figures.tokens, figures.held_tokens, figures.requests) == (LEDGER_TOKENS, 0, 2)


class Reporting:
    """A model of one's own answering "done" with `usage`, priced at `price`."""

    name = "reporting"

    def __init__(self, usage: Usage, price: Price | None = None) -> None:
        self.usage = usage
        self.price = price
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(message=AssistantMessage("done"), usage=self.usage, cost_usd=0.5)


def budget_on(store_url: str | None) -> SharedBudget:
    return SharedBudget(key(), store=store_url if store_url is not None else MemoryStore())


async def test_an_absurd_price_is_refused_before_the_request_is_sent(
    store_url: str | None,
) -> None:
    # before: the infinite hold was taken, the request sent and paid, and its settlement
    # failed at SQLite (a NaN held cost is a NULL) with the hold left
    budget = budget_on(store_url)
    model = Reporting(Usage(5, 20, 25), Price(input=1e300, output=1e300))
    network = Network("n", agents=[Agent("a", model=model, params={"max_tokens": 10**30})])
    with pytest.raises(BudgetExceeded, match="ledger counts at most 1e\\+300 USD") as refused:
        await network.run("hi", budget=budget)
    assert (refused.value.limit, refused.value.budget) == ("ledger_cost_usd", budget.key)
    assert model.requests == []
    figures = await budget_figures(budget)
    assert (figures.held_requests, figures.held_cost_usd, figures.requests) == (0, 0.0, 0)


@pytest.mark.parametrize(
    "usage",
    [Usage(2**53 - 1, 2**53 - 1, 2**54 - 2), Usage(10**30, 10**30, 2 * 10**30)],
    ids=["largest reported", "past any column"],
)
async def test_a_hostile_usage_report_settles_without_a_database_error(
    store_url: str | None, usage: Usage
) -> None:
    budget = budget_on(store_url)
    model = Reporting(usage)
    network = Network("n", agents=[Agent("a", model=model, params={"max_tokens": 10})])
    for _ in range(3):
        if usage.prompt_tokens < 2**53:
            assert (await network.run("hi", budget=budget)).output == "done"
        else:  # no count: the agent refuses the answer, once the ledger settled it
            with pytest.raises(
                ModelError, match="prompt_tokens is 1000000000000000000000000000000"
            ):
                await network.run("hi", budget=budget)
    figures = await budget_figures(budget)
    assert (figures.requests, figures.held_tokens, figures.held_requests) == (3, 0, 0)
    assert 0 < figures.tokens <= 3 * (2**54 - 2) and figures.cost_usd == 1.5
