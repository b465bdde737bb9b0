"""`SharedBudget`: its options checked (a bad one names the field), and the key a run's
spending goes to (`key=`, or `per=` the run's thread, user or app)."""

from __future__ import annotations

import math
from pathlib import Path
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
        ({"key": True}, "SharedBudget.key"),
        ({"key": "a\x00b"}, "SharedBudget.key"),
        ({"key": "a\ud800b"}, "SharedBudget.key"),
        ({"key": "x" * 256 + "\u00e9"}, "SharedBudget.key"),
        ({"per": "tenant"}, "SharedBudget.per"),
        ({"per": ""}, "SharedBudget.per"),
        ({"per": "Thread"}, "SharedBudget.per"),
        ({"per": ["thread"]}, "SharedBudget.per"),
        ({"per": True}, "SharedBudget.per"),
        ({"key": "a", "max_tokens": -1}, "SharedBudget.max_tokens"),
        ({"key": "a", "max_tokens": 1.5}, "SharedBudget.max_tokens"),
        ({"key": "a", "max_cost_usd": math.nan}, "SharedBudget.max_cost_usd"),
        ({"key": "a", "max_cost_usd": math.inf}, "SharedBudget.max_cost_usd"),
        ({"key": "a", "max_cost_usd": -0.5}, "SharedBudget.max_cost_usd"),
        ({"key": "a", "max_cost_usd": True}, "SharedBudget.max_cost_usd"),
        ({"key": "a", "max_cost_usd": 10**400}, "SharedBudget.max_cost_usd .* a huge int"),
        ({"key": "a", "max_cost_usd": "5"}, "SharedBudget.max_cost_usd"),
        ({"key": "a", "max_tokens": True}, "SharedBudget.max_tokens"),
        ({"key": "a", "max_tokens": math.nan}, "SharedBudget.max_tokens"),
        ({"key": "a", "max_requests": True}, "SharedBudget.max_requests"),
        ({"key": "a", "requests_per_minute": 0}, "SharedBudget.requests_per_minute"),
        ({"key": "a", "output_estimate": 0}, "SharedBudget.output_estimate"),
        ({"key": "a", "hold_seconds": 0}, "SharedBudget.hold_seconds"),
        ({"key": "a", "rate_wait": -1}, "SharedBudget.rate_wait"),
        ({"key": "a", "rate_wait": math.inf}, "SharedBudget.rate_wait"),
        ({"key": "a", "rate_wait": math.nan}, "SharedBudget.rate_wait"),
        ({"key": "a", "hold_seconds": math.inf}, "SharedBudget.hold_seconds"),
        ({"key": "a", "hold_seconds": -600}, "SharedBudget.hold_seconds"),
        ({"key": "a", "hold_seconds": False}, "SharedBudget.hold_seconds"),
        ({"key": "a", "output_estimate": 4096.0}, "SharedBudget.output_estimate"),
        # a store that is no store: refused when the budget is made, not when a run starts
        ({"key": "a", "store": 5}, "SharedBudget.store .* got 5"),
        ({"key": "a", "store": True}, "SharedBudget.store"),
        ({"key": "a", "store": b"budgets.db"}, "SharedBudget.store"),
        ({"key": "a", "store": {"url": "x"}}, "SharedBudget.store .* no create_thread"),
        ({"key": "a", "store": MemoryStore}, "SharedBudget.store .* the class MemoryStore"),
        ({"key": "a", "store": ""}, "SharedBudget.store"),
        ({"key": "a", "store": "  "}, "SharedBudget.store"),
        ({"key": "a", "store": "budgets\x00.db"}, "SharedBudget.store"),
        ({"key": "a", "store": "budgets\ud800.db"}, "SharedBudget.store .* lone surrogate"),
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


def test_a_store_is_checked_by_the_thread_stores_own_methods() -> None:
    # `STORE_METHODS` (the budgets' layer cannot import the thread stores) is the protocol's
    from network.run.store_option import STORE_METHODS
    from network.threads import ThreadStore

    assert set(STORE_METHODS) == {name for name in vars(ThreadStore) if name[0] != "_"}


def test_a_store_object_a_url_and_a_path_are_taken(tmp_path: Path) -> None:
    store = MemoryStore()
    assert SharedBudget("a", store=store).store is store
    for given in ("postgresql://db/x", str(tmp_path / "b.db"), tmp_path / "b.db"):
        assert SharedBudget("a", store=given).store == given
    undecodable = "budgets-\udcff.db"  # a file name of bytes not UTF-8, as os.listdir gives it
    assert SharedBudget("a", store=undecodable).store == undecodable


async def test_an_int_cost_cap_past_sqlite_integers_is_a_float_the_ledger_compares(
    tmp_path: Path,
) -> None:
    # an OverflowError ("Python int too large to convert to SQLite INTEGER") at the first
    # request, before
    budget = SharedBudget("a", max_cost_usd=10**20, store=str(tmp_path / "b.db"))
    assert budget.max_cost_usd == 1e20 and isinstance(budget.max_cost_usd, float)
    network = Network("n", agents=[Agent("a", model=ScriptedModel(["hi"]))])
    assert (await network.run("go", budget=budget)).output == "hi"
