"""`MemoryLedger`: shared budgets' figures in the process (tests, notebooks, `MemoryStore`).

Each call runs without awaiting, so on one event loop it is atomic: concurrent runs of the
process reserve one after the other, as the SQL ledger's conditional statement makes runs of
many processes do. Figures are lost with the process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from network.run.budgets.ledger import (
    LEDGER_COST_USD,
    LEDGER_TOKENS,
    BudgetFigures,
    Caps,
    Hold,
    Refusal,
    beyond_reclaimed,
    refusal,
    saturated,
    window_open,
)


@dataclass(slots=True)
class _Account:
    figures: BudgetFigures = field(default_factory=BudgetFigures)
    holds: dict[str, Hold] = field(default_factory=dict)


class MemoryLedger:
    """Figures by key, in this process (see the module docstring)."""

    def __init__(self) -> None:
        self._accounts: dict[str, _Account] = {}

    async def reserve(self, key: str, hold: Hold, caps: Caps, now: float) -> Refusal | None:
        account = self._accounts.setdefault(key, _Account())
        figures = account.figures
        if not caps.bounded:  # never refused for what is held: reclaim before each reservation
            self._reclaim(account, now)
        refused = refusal(figures, hold, caps, now)
        if refused is not None and self._reclaim(account, now):
            refused = refusal(figures, hold, caps, now)
        if refused is not None:
            return refused
        account.holds[hold.id] = hold
        figures.held_tokens += hold.tokens
        figures.held_cost_usd += hold.cost_usd
        figures.held_requests += 1
        if window_open(figures, now):
            figures.window_start, figures.window_requests = now, 1
        else:
            figures.window_requests += 1
        return None

    async def settle(
        self, key: str, hold: Hold, tokens: int, cost_usd: float, requests: int, now: float
    ) -> None:
        account = self._accounts.setdefault(key, _Account())
        figures = account.figures
        if account.holds.pop(hold.id, None) is not None:
            figures.held_tokens -= hold.tokens
            figures.held_cost_usd -= hold.cost_usd
            figures.held_requests -= 1
        else:  # reclaimed as spent already: count the rest only
            tokens, cost_usd, requests = beyond_reclaimed(hold, tokens, cost_usd, requests)
        figures.tokens = int(saturated(figures.tokens, tokens, LEDGER_TOKENS))
        figures.cost_usd = saturated(figures.cost_usd, cost_usd, LEDGER_COST_USD)
        figures.requests += requests

    async def figures(self, key: str, now: float | None = None) -> BudgetFigures:
        account = self._accounts.get(key)
        if account is None:
            return BudgetFigures()
        # a dead process's hold is not shown held for ever
        self._reclaim(account, time.time() if now is None else now)
        found = account.figures
        return BudgetFigures(
            found.tokens,
            found.cost_usd,
            found.requests,
            found.held_tokens,
            found.held_cost_usd,
            found.held_requests,
            found.window_start,
            found.window_requests,
        )

    @staticmethod
    def _reclaim(account: _Account, now: float) -> bool:
        """Expired holds given back as spent (their process is gone); whether there were any."""
        expired = [hold for hold in account.holds.values() if hold.expires_at <= now]
        figures = account.figures
        for hold in expired:
            del account.holds[hold.id]
            figures.held_tokens -= hold.tokens
            figures.held_cost_usd -= hold.cost_usd
            figures.held_requests -= 1
            figures.tokens = int(saturated(figures.tokens, hold.tokens, LEDGER_TOKENS))
            figures.cost_usd = saturated(figures.cost_usd, hold.cost_usd, LEDGER_COST_USD)
            figures.requests += 1
        return bool(expired)
