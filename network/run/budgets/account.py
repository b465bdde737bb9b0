"""A run's account on a shared budget: reserve before a model request, settle after.

`network.run(..., budget=SharedBudget(...))` opens one `BudgetAccount` per budget for the run
(its key resolved, its ledger opened: `network.threads.ledgers`), held by the run context
(`RunContext.engine.budget_accounts`) and shared with its sub-runs. The model request stage calls
`reserve` (every account, in order: one that refuses releases those before it) and then
`settle` with what the request spent, or `release` when it failed.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass

import anyio

from network.errors import BudgetExceeded
from network.ids import new_id
from network.run.budgets.ledger import Caps, Hold, Ledger, Refusal
from network.run.budgets.shared import SharedBudget


@dataclass(frozen=True, slots=True)
class Held:
    """What one account holds for one request."""

    account: BudgetAccount
    hold: Hold


class BudgetAccount:
    """One budget's key and ledger, for one run (and its sub-runs)."""

    __slots__ = ("_close", "budget", "caps", "key", "ledger", "where")

    def __init__(
        self,
        budget: SharedBudget,
        key: str,
        ledger: Ledger,
        close: Callable[[], Awaitable[None]] | None = None,
        where: object = None,
    ) -> None:
        self.budget = budget
        self.key = key
        self.ledger = ledger
        # The store the ledger is on, as the run named it (its URL, or the store object): two
        # accounts on one key and one `where` are one ledger row (`network.threads.ledgers`).
        self.where = where
        self.caps = Caps(
            budget.max_tokens,
            budget.max_cost_usd,
            budget.max_requests,
            budget.requests_per_minute,
        )
        self._close = close  # the ledger's store, when the run opened it

    async def reserve(self, tokens: int, cost_usd: float) -> Held:
        """Hold `tokens` and `cost_usd` for one request, or `BudgetExceeded` naming the cap.

        Over `requests_per_minute`, the request waits for the next window (up to the
        budget's `rate_wait` seconds in all) and tries again."""
        waited = 0.0
        while True:
            now = time.time()
            hold = Hold(new_id("hold_"), tokens, cost_usd, now + self.budget.hold_seconds)
            refused = await self.ledger.reserve(self.key, hold, self.caps, now)
            if refused is None:
                return Held(self, hold)
            pause = refused.retry_after
            if pause is None or waited + pause > self.budget.rate_wait:
                raise self._exceeded(refused)
            pause += 0.01  # past the window's edge
            await anyio.sleep(pause)
            waited += pause

    async def settle(self, held: Held, tokens: int, cost_usd: float, requests: int) -> None:
        """The request is done: its hold goes, what it spent is counted."""
        await self.ledger.settle(self.key, held.hold, tokens, cost_usd, requests, time.time())

    async def close(self) -> None:
        """Close the ledger's store when the run opened it."""
        close, self._close = self._close, None
        if close is not None:
            await close()

    def _exceeded(self, refused: Refusal) -> BudgetExceeded:
        unit = {
            "max_cost_usd": "USD",
            "max_tokens": "tokens",
            "ledger_cost_usd": "USD",
            "ledger_tokens": "tokens",
        }.get(refused.limit, "requests")
        if refused.limit.startswith("ledger_"):
            return BudgetExceeded(
                f"budget {self.key!r}: its ledger counts at most {refused.value:g} {unit} a "
                f"key, spent and held together; this request asked for {refused.asked:g} "
                f"{unit}, with {refused.spent:g} spent and {refused.held:g} held",
                budget=self.key,
                **asdict(refused),
            )
        if refused.limit == "requests_per_minute":
            why = (
                f"{refused.spent:g} requests started in this minute; the next window opens "
                f"in {refused.retry_after or 0:.1f} s, past the {self.budget.rate_wait:g} s "
                "this request may wait"
            )
        else:
            why = (
                f"this request asked for {refused.asked:g} {unit}; {refused.spent:g} spent, "
                f"{refused.held:g} held by requests under way"
            )
        return BudgetExceeded(
            f"budget {self.key!r}: {refused.limit}={refused.value:g} leaves no room ({why})",
            budget=self.key,
            **asdict(refused),  # the refusal's figures are the error's: limit, value, ...
        )


async def reserve_all(
    accounts: Sequence[BudgetAccount], asked: Sequence[tuple[int, float]]
) -> list[Held]:
    """Hold on every account (`asked[i]`: tokens and cost for `accounts[i]`), in order; when
    one refuses, the holds made before it are released and its `BudgetExceeded` raised."""
    held: list[Held] = []
    try:
        for account, (tokens, cost_usd) in zip(accounts, asked, strict=True):
            held.append(await account.reserve(tokens, cost_usd))
    except BaseException:
        await release_all(held)
        raise
    return held


async def settle_all(
    held: Sequence[Held], tokens: int | None, cost_usd: float | None, requests: int
) -> None:
    """Settle each hold with what the request spent (shielded: a cancellation after the
    answer must not leave the budget holding what was spent); `tokens` or `cost_usd` None
    (the model reported no figure) counts what the hold reserved."""
    await _each(
        held,
        lambda item: item.account.settle(
            item,
            item.hold.tokens if tokens is None else tokens,
            item.hold.cost_usd if cost_usd is None else cost_usd,
            requests,
        ),
    )


async def release_all(held: Sequence[Held]) -> None:
    """Give back each hold of a request that failed (shielded, as it runs while unwinding)."""
    await _each(held, lambda item: item.account.settle(item, 0, 0.0, 0))


async def _each(held: Sequence[Held], settle: Callable[[Held], Awaitable[None]]) -> None:
    """`settle` each hold, shielded; one whose store fails does not keep the others from
    being settled (they would stay held until reclaimed as spent): its error is raised after."""
    failed: BaseException | None = None
    with anyio.CancelScope(shield=True):
        for item in held:
            try:
                await settle(item)
            except Exception as error:
                failed = failed or error
    if failed is not None:
        raise failed


async def close_accounts(accounts: Sequence[BudgetAccount]) -> None:
    """Close the stores the run opened for its accounts (at its end)."""
    with anyio.CancelScope(shield=True):
        for account in accounts:
            await account.close()
