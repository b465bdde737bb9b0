"""`SharedBudget`: its options checked (a bad one names the field), and the key a run's
spending goes to (`key=`, or `per=` the run's thread, user or app)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from agents import Agent, ScriptedModel
from network import ConfigurationError, Network, SharedBudget
from network.run.budgets.shared import coerce_budgets
from network.threads import MemoryStore

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({}, "a key .* or per="),
        ({"key": "a", "per": "user"}, "one of the two"),
        ({"key": ""}, "SharedBudget.key"),
        ({"key": "   "}, "SharedBudget.key"),
        ({"key": "a\nb"}, "SharedBudget.key"),
        ({"key": "x" * 257}, "SharedBudget.key"),
        ({"key": 7}, "SharedBudget.key"),
        ({"per": "tenant"}, "SharedBudget.per"),
        ({"key": "a", "max_tokens": -1}, "SharedBudget.max_tokens"),
        ({"key": "a", "max_tokens": 1.5}, "SharedBudget.max_tokens"),
        ({"key": "a", "max_cost_usd": math.nan}, "SharedBudget.max_cost_usd"),
        ({"key": "a", "max_cost_usd": math.inf}, "SharedBudget.max_cost_usd"),
        ({"key": "a", "max_requests": True}, "SharedBudget.max_requests"),
        ({"key": "a", "requests_per_minute": 0}, "SharedBudget.requests_per_minute"),
        ({"key": "a", "output_estimate": 0}, "SharedBudget.output_estimate"),
        ({"key": "a", "hold_seconds": 0}, "SharedBudget.hold_seconds"),
        ({"key": "a", "rate_wait": -1}, "SharedBudget.rate_wait"),
        # past what the ledger's columns hold (an OverflowError on the first request)
        ({"key": "a", "max_tokens": 2**53}, "SharedBudget.max_tokens .* 9,007,199,254,740,991"),
        ({"key": "a", "max_requests": 2**63}, "SharedBudget.max_requests"),
        ({"key": "a", "output_estimate": 10**30}, "SharedBudget.output_estimate"),
        ({"key": "a", "requests_per_minute": 2**31}, "SharedBudget.requests_per_minute"),
    ],
)
def test_a_bad_option_is_refused_naming_it(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigurationError, match=named):
        SharedBudget(**options)


def test_the_key_of_a_run() -> None:
    assert SharedBudget("tenant:acme").key_for("t1", "ann", "shop") == "tenant:acme"
    assert SharedBudget(per="thread").key_for("t1", "ann", "shop") == "thread:shop/t1"
    assert SharedBudget(per="user").key_for("t1", "ann", "shop") == "user:shop/ann"
    assert SharedBudget(per="app").key_for(None, None, "shop") == "app:shop"
    with pytest.raises(ConfigurationError, match="needs a run on a thread"):
        SharedBudget(per="user").key_for(None, None, "shop")


def test_a_budget_shows_its_key_and_caps() -> None:
    budget = SharedBudget("tenant:acme", max_tokens=10, requests_per_minute=5)
    assert repr(budget) == "SharedBudget('tenant:acme', max_tokens=10, requests_per_minute=5)"
    assert budget.capped and not SharedBudget(per="thread").capped


def test_budget_takes_one_or_a_list_of_budgets() -> None:
    one = SharedBudget("a")
    assert coerce_budgets("n", None) == ()
    assert coerce_budgets("n", one) == (one,)
    assert coerce_budgets("n", [one, one]) == (one, one)
    for bad in ("a", [one, "b"], {"key": "a"}):
        with pytest.raises(ConfigurationError, match="budget must be a SharedBudget"):
            coerce_budgets("n", bad)


async def test_a_per_thread_budget_refuses_a_run_without_a_thread_before_it_asks() -> None:
    model = ScriptedModel(["hi"])
    network = Network("n", agents=[Agent("a", model=model)])
    with pytest.raises(ConfigurationError, match="needs a run on a thread"):
        await network.run("go", budget=SharedBudget(per="thread", store=MemoryStore()))
    assert model.requests == []
    with pytest.raises(ConfigurationError, match="budget must be a SharedBudget"):
        await network.run("go", budget="tenant:acme")  # type: ignore[arg-type]
