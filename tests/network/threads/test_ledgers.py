"""Where a shared budget's figures live (`network.threads.ledgers`): beside the run's thread by
default, on the store it names otherwise; `per="thread"` carries a cap across a thread's runs,
wherever they run; a network's budget is every run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import Agent, ScriptedModel
from network import BudgetExceeded, ConfigurationError, Network, SharedBudget, ThreadRef
from network.threads import MemoryStore, SQLStore, budget_figures
from network.threads.ledgers import ledger_of
from network.threads.sql_ledger import SQLLedger

pytestmark = pytest.mark.anyio


def chat() -> tuple[Network, ScriptedModel]:
    model = ScriptedModel(lambda request: "ok")
    return Network("chat", agents=[Agent("a", model=model)]), model


async def test_a_per_thread_budget_caps_the_threads_runs_together(tmp_path: Path) -> None:
    path = str(tmp_path / "chat.db")
    network, model = chat()
    budget = SharedBudget(per="thread", max_requests=3)  # kept beside the thread
    for _ in range(3):
        await network.run("hi", thread=ThreadRef("t1", store=path), budget=budget)
    with pytest.raises(BudgetExceeded, match="thread:chat/t1"):
        await network.run("hi", thread=ThreadRef("t1", store=path), budget=budget)
    other, _ = chat()  # another thread has a budget of its own
    await other.run("hi", thread=ThreadRef("t2", store=path), budget=budget)
    assert len(model.requests) == 3
    async with SQLStore(path) as store:  # in the thread store's own database
        figures = await budget_figures(budget, key="thread:chat/t1", store=store)
        assert (figures.requests, figures.held_requests) == (3, 0)
        assert isinstance(ledger_of(store), SQLLedger)


async def test_a_per_user_budget_spans_the_users_threads() -> None:
    store = MemoryStore()
    network, model = chat()
    budget = SharedBudget(per="user", max_requests=2)
    await network.run("hi", thread=ThreadRef("a", user_id="ann", store=store), budget=budget)
    await network.run("hi", thread=ThreadRef("b", user_id="ann", store=store), budget=budget)
    with pytest.raises(BudgetExceeded, match="user:chat/ann"):
        await network.run("hi", thread=ThreadRef("c", user_id="ann", store=store), budget=budget)
    await network.run("hi", thread=ThreadRef("d", user_id="bob", store=store), budget=budget)
    assert len(model.requests) == 3
    figures = await budget_figures(budget, key="user:chat/ann", store=store)
    assert figures.requests == 2


async def test_a_budget_on_a_path_of_its_own_and_a_networks_default(tmp_path: Path) -> None:
    path = str(tmp_path / "budgets.db")
    budget = SharedBudget("tenant:acme", max_requests=2, store=path)
    model = ScriptedModel(lambda request: "ok")
    network = Network("n", agents=[Agent("a", model=model)], budget=budget)
    await network.run("one")
    await network.run("two")
    with pytest.raises(BudgetExceeded):
        await network.run("three")
    assert (await budget_figures(budget)).requests == 2
    await network.run("four", budget=SharedBudget("tenant:other", store=path))  # replaces it
    assert len(model.requests) == 3


async def test_reading_a_per_budget_needs_its_key() -> None:
    with pytest.raises(ConfigurationError, match="give the key"):
        await budget_figures(SharedBudget(per="thread"), store=MemoryStore())
    with pytest.raises(ConfigurationError, match="key"):
        await budget_figures(SharedBudget("a"), key="\x00", store=MemoryStore())


async def test_reading_figures_names_what_is_wrong() -> None:
    # an AttributeError ("'str' object has no attribute 'key'") before
    for wrong in ("tenant:acme", None, {"key": "a"}):
        with pytest.raises(ConfigurationError, match="budget_figures takes a SharedBudget"):
            await budget_figures(wrong, store=MemoryStore())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="budget_figures: key"):
        await budget_figures(SharedBudget("a"), key=5, store=MemoryStore())  # type: ignore[arg-type]
