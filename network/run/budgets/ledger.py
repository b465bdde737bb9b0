"""The ledger a shared budget keeps its figures in: what each key spent and holds.

A `Ledger` answers three calls, each atomic on its store:

- `reserve(key, hold)`: add the hold to the key's reservations if, with what the key spent
  and what requests under way hold, it fits under every cap (and the per-minute window has
  room); else change nothing and say which cap refused (`Refusal`);
- `settle(key, hold, spent)`: the hold leaves the reservations and what the request
  really spent is added (a release is a settle of nothing);
- `figures(key)`: what the key spent and holds now.

A hold not settled by its `expires_at` (its process died) is reclaimed before a refusal is
decided: it leaves the reservations and its whole amount counts as spent, since the request
may have been made. A budget whose caps bound no total (`Caps.bounded`: it only counts, or
caps the per-minute rate alone) never finds no room for what is held, so each of its
reservations reclaims first; and `figures` reclaims what has expired before it answers, so a
dead process's hold is never shown held past its time, whoever reads it.

A request that was only slow (its process alive, its answer coming after `expires_at`) finds
its hold reclaimed when it settles: that request was counted already (one request, what it
held), so its settlement adds only what it spent beyond the hold (`beyond_reclaimed`), never
the request a second time.

A ledger counts no further than `LEDGER_TOKENS` and `LEDGER_COST_USD` a key (see there): a
hold that would take what a key spent and holds past either is refused (`Refusal` of limit
`ledger_tokens` or `ledger_cost_usd`, whatever the caps), and what a settlement or a reclaim
adds stops at them (`saturated`): a request already made is always settled, never failed at
the store. `MemoryLedger` (`network.run.budgets.memory_ledger`) keeps figures in
the process; the SQL ledger (`network.threads.sql_ledger`) in the thread store's database,
shared by processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

WINDOW = 60.0  # seconds: the per-minute window of `requests_per_minute`

LEDGER_TOKENS = 2**61
"""The most tokens a key's figures count (spent plus held). A quarter of the 64-bit column
that keeps them, so that no sum the reservation's condition makes (spent + held + asked, each
at most this) passes 2**63 - 1: PostgreSQL fails such a statement ("bigint out of range") and
SQLite turns the figure into an inexact float. No key spends this many in earnest (a million
tokens a second for 73,000 years): only a model of one's own reporting absurd usage over and
over, or a key metered without a cap for ever, comes near it."""

LEDGER_COST_USD = 1e300
"""The most USD a key's figures count (spent plus held): far under a double's largest, so
that their sums stay finite (an infinite hold, from an absurd `price`, made the held figure
NaN when settled, which SQLite keeps as NULL: the settlement failed at the store)."""


@dataclass(frozen=True, slots=True)
class Caps:
    """A budget's caps (None: no cap)."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    max_requests: int | None = None
    requests_per_minute: int | None = None

    @property
    def bounded(self) -> bool:
        """Whether a cap bounds what the key spends (tokens, cost, requests): only then can
        a reservation find no room for what requests under way hold."""
        totals = (self.max_tokens, self.max_cost_usd, self.max_requests)
        return any(cap is not None for cap in totals)


@dataclass(frozen=True, slots=True)
class Hold:
    """One request's reservation: its id, what it may spend, and when it is reclaimed."""

    id: str
    tokens: int
    cost_usd: float
    expires_at: float


@dataclass(slots=True)
class BudgetFigures:
    """What a budget's key spent (`tokens`, `cost_usd`, `requests`) and what the requests
    under way hold (`held_*`), as its ledger has them now; `window_*`: the current
    per-minute window's start and how many requests it counted."""

    tokens: int = 0
    cost_usd: float = 0.0
    requests: int = 0
    held_tokens: int = 0
    held_cost_usd: float = 0.0
    held_requests: int = 0
    window_start: float = 0.0
    window_requests: int = 0


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a hold did not fit: the cap, its value, and the figures in its unit."""

    limit: str
    value: float
    spent: float
    held: float
    asked: float
    retry_after: float | None = None  # the per-minute window's opening, in seconds


class Ledger(Protocol):
    """Where shared budgets keep their figures (see the module docstring)."""

    async def reserve(self, key: str, hold: Hold, caps: Caps, now: float) -> Refusal | None:
        """Hold `hold` on `key` if it fits under `caps`; else the refusal (nothing held)."""
        ...

    async def settle(
        self, key: str, hold: Hold, tokens: int, cost_usd: float, requests: int, now: float
    ) -> None:
        """Drop `hold` and count what its request spent; a hold no longer held (reclaimed as
        spent) counts only what was spent beyond it (`beyond_reclaimed`)."""
        ...

    async def figures(self, key: str, now: float | None = None) -> BudgetFigures:
        """What `key` spent and holds at `now` (default: the time), its holds expired by then
        reclaimed (as spent) first."""
        ...


def beyond_reclaimed(
    hold: Hold, tokens: int, cost_usd: float, requests: int
) -> tuple[int, float, int]:
    """What a request settled after its hold was reclaimed still adds: the reclaim counted
    the hold's tokens and cost and one request as spent, so only what it spent beyond them."""
    return max(tokens - hold.tokens, 0), max(cost_usd - hold.cost_usd, 0.0), max(requests - 1, 0)


def saturated(figure: float, amount: float, ceiling: float) -> float:
    """`figure + amount` (an amount spent, >= 0), stopping at `ceiling`; an amount that is no
    finite number counts as the ceiling (the worst)."""
    if not amount <= ceiling:  # NaN or past it
        return ceiling
    return ceiling if figure > ceiling - amount else figure + amount


def window_open(figures: BudgetFigures, now: float) -> bool:
    """Whether `now` starts a new per-minute window (the current one has ended)."""
    return figures.window_start <= now - WINDOW


def refusal(figures: BudgetFigures, hold: Hold, caps: Caps, now: float) -> Refusal | None:
    """The cap `hold` does not fit under, given the key's `figures`; None when it fits.

    The one rule every ledger applies (the SQL ledger in its conditional statement, then
    here to say why it refused)."""
    rate = caps.requests_per_minute
    if rate is not None and not window_open(figures, now) and figures.window_requests >= rate:
        retry_after = figures.window_start + WINDOW - now
        return Refusal(
            "requests_per_minute", rate, figures.window_requests, 0, 1, max(retry_after, 0.0)
        )
    if caps.max_requests is not None and (
        figures.requests + figures.held_requests + 1 > caps.max_requests
    ):
        return Refusal(
            "max_requests", caps.max_requests, figures.requests, figures.held_requests, 1
        )
    if caps.max_tokens is not None and (
        figures.tokens + figures.held_tokens + hold.tokens > caps.max_tokens
    ):
        return Refusal(
            "max_tokens", caps.max_tokens, figures.tokens, figures.held_tokens, hold.tokens
        )
    if caps.max_cost_usd is not None and (
        figures.cost_usd + figures.held_cost_usd + hold.cost_usd > caps.max_cost_usd
    ):
        return Refusal(
            "max_cost_usd",
            caps.max_cost_usd,
            figures.cost_usd,
            figures.held_cost_usd,
            hold.cost_usd,
        )
    if figures.tokens + figures.held_tokens + hold.tokens > LEDGER_TOKENS:
        return Refusal(
            "ledger_tokens", LEDGER_TOKENS, figures.tokens, figures.held_tokens, hold.tokens
        )
    # `not <=`: a NaN hold (an absurd price) is refused too
    if not figures.cost_usd + figures.held_cost_usd + hold.cost_usd <= LEDGER_COST_USD:
        return Refusal(
            "ledger_cost_usd",
            LEDGER_COST_USD,
            figures.cost_usd,
            figures.held_cost_usd,
            hold.cost_usd,
        )
    return None
