"""The one rule every ledger applies (`network.run.budgets.ledger.refusal`): which cap a
hold does not fit under, in its unit, and the per-minute window."""

from __future__ import annotations

from network.run.budgets.ledger import BudgetFigures, Caps, Hold, refusal, window_open

NOW = 1_000_000.0


def hold(tokens: int = 100, cost: float = 0.0) -> Hold:
    return Hold("h", tokens, cost, NOW + 60)


def test_a_hold_fits_when_spent_plus_held_plus_asked_is_within_each_cap() -> None:
    figures = BudgetFigures(tokens=500, held_tokens=400, requests=3, held_requests=1)
    assert refusal(figures, hold(100), Caps(max_tokens=1000, max_requests=5), NOW) is None
    refused = refusal(figures, hold(101), Caps(max_tokens=1000), NOW)
    assert refused is not None
    assert (refused.limit, refused.value, refused.spent, refused.held, refused.asked) == (
        "max_tokens",
        1000,
        500,
        400,
        101,
    )


def test_requests_and_cost_caps() -> None:
    figures = BudgetFigures(requests=4, held_requests=1, cost_usd=0.5, held_cost_usd=0.25)
    refused = refusal(figures, hold(), Caps(max_requests=5), NOW)
    assert refused is not None and (refused.limit, refused.asked) == ("max_requests", 1)
    assert refusal(figures, hold(cost=0.25), Caps(max_cost_usd=1.0), NOW) is None
    refused = refusal(figures, hold(cost=0.26), Caps(max_cost_usd=1.0), NOW)
    assert refused is not None and refused.limit == "max_cost_usd"


def test_the_per_minute_window() -> None:
    busy = BudgetFigures(window_start=NOW - 20, window_requests=3)
    refused = refusal(busy, hold(), Caps(requests_per_minute=3), NOW)
    assert refused is not None and refused.limit == "requests_per_minute"
    assert refused.retry_after == 40
    assert refusal(busy, hold(), Caps(requests_per_minute=4), NOW) is None
    ended = BudgetFigures(window_start=NOW - 60, window_requests=99)
    assert window_open(ended, NOW) and not window_open(busy, NOW)
    assert refusal(ended, hold(), Caps(requests_per_minute=3), NOW) is None


def test_no_caps_refuse_nothing() -> None:
    assert refusal(BudgetFigures(tokens=10**12), hold(10**9), Caps(), NOW) is None
