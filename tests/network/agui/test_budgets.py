"""Served apps set a shared budget per principal (`network.agui.budgets`): a principal's
runs reserve on its own budget, a refused request ends the run with RUN_ERROR code
`BudgetExceeded` naming that budget, and other principals go on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel
from network import ConfigurationError, Network, SharedBudget
from network.agui import app
from network.threads import MemoryStore, SQLStore, budget_figures
from tests.network.agui.protocol import parse_sse

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


def bearer(request: Any, thread_id: str | None) -> str | None:
    token = request.headers.get("authorization", "").removeprefix("Bearer ")
    return {"token-alice": "alice", "token-bob": "bob"}.get(token)


def echo(**options: Any) -> tuple[Network, ScriptedModel]:
    model = ScriptedModel(lambda request: "ok")
    return Network("echo", agents=[Agent("a", model=model)], **options), model


async def post(asgi: Any, token: str, thread: str, run: str) -> list[dict[str, Any]]:
    transport = httpx.ASGITransport(app=asgi)
    headers = {"authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://t", headers=headers, timeout=30
    ) as http:
        body = {
            "threadId": thread,
            "runId": run,
            "messages": [{"id": f"{run}-u", "role": "user", "content": "hi"}],
        }
        response = await http.post("/", json=body)
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


def ended(events: list[dict[str, Any]]) -> str:
    return str(events[-1]["type"])


async def test_each_principal_reserves_on_its_own_budget() -> None:
    ledger = MemoryStore()
    network, model = echo()
    asgi = app(
        network,
        authorize=bearer,
        budget=lambda principal: SharedBudget(f"user:{principal}", max_requests=2, store=ledger),
    )
    assert ended(await post(asgi, "token-alice", "a1", "r1")) == "RUN_FINISHED"
    assert ended(await post(asgi, "token-alice", "a2", "r2")) == "RUN_FINISHED"
    refused = await post(asgi, "token-alice", "a3", "r3")
    error = refused[-1]
    assert error["type"] == "RUN_ERROR" and error["code"] == "BudgetExceeded"
    assert "budget 'user:alice': max_requests=2" in error["message"]
    assert ended(await post(asgi, "token-bob", "b1", "r4")) == "RUN_FINISHED"
    assert len(model.requests) == 3  # alice's third was never sent
    alice = await budget_figures(SharedBudget("user:alice", store=ledger))
    assert (alice.requests, alice.held_requests) == (2, 0)


async def test_a_stored_server_keeps_per_user_budgets_in_its_store(tmp_path: Path) -> None:
    async with SQLStore(str(tmp_path / "served.db")) as store:
        network, model = echo()
        budget = SharedBudget(per="user", max_requests=1)
        asgi = app(network, authorize=bearer, store=store, budget=budget)
        assert ended(await post(asgi, "token-alice", "a1", "r1")) == "RUN_FINISHED"
        assert ended(await post(asgi, "token-alice", "a2", "r2")) == "RUN_ERROR"
        assert ended(await post(asgi, "token-bob", "b1", "r3")) == "RUN_FINISHED"
        assert len(model.requests) == 2
        figures = await budget_figures(budget, key="user:echo/alice", store=store)
        assert figures.requests == 1


async def test_without_budget_the_networks_own_applies() -> None:
    ledger = MemoryStore()
    network, model = echo(budget=SharedBudget("app:echo", max_requests=1, store=ledger))
    asgi = app(network, authorize=bearer)
    assert ended(await post(asgi, "token-alice", "a1", "r1")) == "RUN_FINISHED"
    assert ended(await post(asgi, "token-bob", "b1", "r2")) == "RUN_ERROR"
    assert len(model.requests) == 1


def test_a_bad_budget_is_refused() -> None:
    network, _ = echo()
    with pytest.raises(ConfigurationError, match="budget must be a SharedBudget"):
        app(network, budget="user:alice")


def failing_budget(principal: str | None) -> Any:
    raise RuntimeError("the tenant database said: password sk-123 refused")


@pytest.mark.parametrize(
    "budget", [failing_budget, lambda principal: "a string"], ids=["raises", "no budget"]
)
async def test_a_budget_function_that_fails_is_a_500_with_a_reference(budget: Any) -> None:
    # it was a 200 with an empty event stream: no RUN_STARTED, no RUN_ERROR, the failure lost
    network, model = echo()
    asgi = app(network, authorize=bearer, budget=budget)
    transport = httpx.ASGITransport(app=asgi)
    headers = {"authorization": "Bearer token-alice"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://t", headers=headers, timeout=30
    ) as http:
        body = {
            "threadId": "a1",
            "runId": "r1",
            "messages": [{"id": "u", "role": "user", "content": "hi"}],
        }
        response = await http.post("/", json=body)
        assert response.status_code == 500
        error = response.json()["error"]
        assert error["code"] == "internal_error" and "reference err_" in error["message"]
        assert "sk-123" not in response.text and "a string" not in response.text
        assert model.requests == []  # nothing ran, nothing was paid
        # the thread is free: a fixed hook would run on it at once
        again = await http.post("/", json={**body, "runId": "r2"})
        assert again.status_code == 500  # the same hook, the same refusal (not 409 busy)
