"""The promises of docs/budgets.md that no other test held: several budgets on one run, the
output parameters and the model's own token count in a reservation, one request per
attempt, a cancelled request's release, a guardrail agent's and a summarising agent's
requests, and the default store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Agent, ContextPolicy, ScriptedModel, input_guardrail, tool
from agents.models.base import ModelRequest, ModelResponse
from network import BudgetExceeded, ModelError, Network, SharedBudget, ThreadRef
from network.history.messages import AssistantMessage, ToolCall
from network.history.results import Usage
from network.threads import MemoryStore, budget_figures
from network.threads.urls import STORE_ENV

pytestmark = pytest.mark.anyio

USAGE = Usage(5, 20, 25)


class Noting:
    """Answers "done" with `USAGE`; notes what each budget held while each request was sent,
    and answers with `attempts` attempts (a model's retries)."""

    name = "noting"

    def __init__(self, budgets: list[SharedBudget], attempts: int = 0) -> None:
        self.budgets = budgets
        self.attempts = attempts
        self.requests: list[ModelRequest] = []
        self.held: list[list[int]] = []

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
        self.requests.append(request)
        self.held.append([(await budget_figures(b)).held_tokens for b in self.budgets])
        response = ModelResponse(message=AssistantMessage("done"), usage=USAGE)
        response.attempts = [{"attempt": n} for n in range(self.attempts)]  # type: ignore[misc]
        return response


def network_of(model: Any, **options: Any) -> Network:
    return Network("n", agents=[Agent("a", model=model, **options)])


async def test_a_list_of_budgets_reserves_on_each_and_one_refusal_holds_on_none() -> None:
    store = MemoryStore()
    user = SharedBudget("user:ann", store=store)
    tenant = SharedBudget("tenant:acme", max_requests=1, store=store)
    model = Noting([user, tenant])
    network = network_of(model, params={"max_tokens": 10})
    await network.run("hi", budget=[user, tenant])
    (held,) = model.held
    assert held[0] == held[1] > 10  # the same request held on both
    with pytest.raises(BudgetExceeded) as refused:
        await network.run("hi", budget=[user, tenant])
    assert refused.value.budget == "tenant:acme" and len(model.requests) == 1
    for budget in (user, tenant):  # the user's hold was given back when the tenant refused
        figures = await budget_figures(budget)
        assert (figures.tokens, figures.requests, figures.held_tokens) == (25, 1, 0)


@pytest.mark.parametrize("name", ["max_tokens", "max_completion_tokens"])
async def test_the_output_reserved_is_the_requests_own_limit(name: str) -> None:
    budget = SharedBudget("t", store=MemoryStore(), output_estimate=5_000)
    model = Noting([budget])
    await network_of(model, params={name: 123}).run("hi", budget=budget)
    await network_of(model).run("hi", budget=budget)  # none: the budget's estimate
    (with_limit,), (without,) = model.held
    assert without - with_limit == 5_000 - 123


async def test_a_models_own_token_count_is_the_input_reserved() -> None:
    class Counted(Noting):
        async def request_tokens(self, request: ModelRequest) -> int:
            return 1_000  # as litellm's tokenizer would say for the model

    budget = SharedBudget("t", store=MemoryStore())
    model = Counted([budget])
    await network_of(model, params={"max_tokens": 7}).run("hi", budget=budget)
    assert model.held == [[1_007]]


async def test_each_attempt_of_a_request_counts_as_one() -> None:
    budget = SharedBudget("t", store=MemoryStore())
    model = Noting([budget], attempts=3)  # the model retried twice before it was answered
    await network_of(model).run("hi", budget=budget)
    assert (await budget_figures(budget)).requests == 3


async def test_a_cancelled_request_gives_its_reservation_back() -> None:
    budget = SharedBudget("t", max_tokens=100_000, store=MemoryStore())
    asked = anyio.Event()

    class Hanging:
        name = "hanging"

        async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
            asked.set()
            await anyio.sleep_forever()
            raise AssertionError  # never answered

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: network_of(Hanging()).run("hi", budget=budget))
        await asked.wait()
        assert (await budget_figures(budget)).held_requests == 1
        group.cancel_scope.cancel()
    figures = await budget_figures(budget)
    assert (figures.held_tokens, figures.held_requests, figures.requests) == (0, 0, 0)


async def test_a_guardrail_agents_requests_reserve_too() -> None:
    budget = SharedBudget("t", max_requests=1, store=MemoryStore())
    checker = ScriptedModel(["fine"])
    guard = input_guardrail(Agent("guard", model=checker), tripped=lambda answer: False)
    worker = ScriptedModel(["done"])
    network = Network("n", agents=[Agent("a", model=worker, input_guardrails=[guard])])
    with pytest.raises(BudgetExceeded, match="max_requests=1"):
        await network.run("hi", budget=budget)
    assert len(checker.requests) == 1 and worker.requests == []  # the guard's took the room
    assert (await budget_figures(budget)).requests == 1


async def test_a_summarising_agents_requests_reserve_too() -> None:
    store = MemoryStore()
    budget = SharedBudget("t", store=store)
    summarizer = ScriptedModel(lambda request: "they talked")
    policy = ContextPolicy(max_messages=2, summarize=Agent("summarizer", model=summarizer))
    worker = ScriptedModel(lambda request: "ok")
    network = Network("n", agents=[Agent("a", model=worker, context_policy=policy)])
    for turn in range(4):
        await network.run(f"turn {turn}", thread=ThreadRef("long", store=store), budget=budget)
    assert summarizer.requests  # the thread outgrew the policy: it was summarised
    requests = len(worker.requests) + len(summarizer.requests)
    assert (await budget_figures(budget)).requests == requests


async def test_without_a_store_a_budget_lives_in_the_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "default.db"
    monkeypatch.setenv(STORE_ENV, str(path))
    budget = SharedBudget("tenant:acme")
    await network_of(ScriptedModel(["done"])).run("hi", budget=budget)
    assert path.exists()
    assert (await budget_figures(budget, store=str(path))).requests == 1
    assert (await budget_figures(budget)).requests == 1  # read where the run wrote


async def test_a_sub_run_reserves_on_its_callers_budgets_then_on_its_own() -> None:
    store = MemoryStore()
    caller_budget = SharedBudget("tenant:acme", store=store)
    own = SharedBudget("helper", max_requests=1, store=store)
    helper_model = Noting([caller_budget, own])
    helper = Network("helper", agents=[Agent("h", model=helper_model)], budget=own)
    boss_model = ScriptedModel(
        [AssistantMessage(None, [ToolCall("c1", "helper", {"input": "tides"})]), "ok"]
    )
    boss = Agent("boss", tools=[helper.as_tool(description="Helps.")], model=boss_model)
    office = Network(
        "office",
        agents=[boss],
        router=lambda ctx: boss if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )
    result = await office.run("go", budget=caller_budget)
    assert result.output == "ok"
    (held,) = helper_model.held  # its one request held on both, the caller's first
    assert held[0] == held[1] > 0
    caller, mine = await budget_figures(caller_budget), await budget_figures(own)
    assert (caller.requests, mine.requests) == (3, 1)  # the boss's two and the helper's one


async def test_a_run_started_inside_a_tool_reserves_on_the_callers_budget() -> None:
    budget = SharedBudget("tenant:acme", max_requests=2, store=MemoryStore())
    inner_model = ScriptedModel(["inner answer", "never"])
    inner = Network("inner", agents=[Agent("i", model=inner_model)])

    @tool
    async def ask_inner(question: str) -> str:
        """Ask the inner network."""
        return (await inner.run(question)).output or ""

    boss_model = ScriptedModel(
        [AssistantMessage(None, [ToolCall("c1", "ask_inner", {"question": "q"})]), "never"]
    )
    boss = Agent("boss", tools=[ask_inner], model=boss_model)
    office = Network(
        "office",
        agents=[boss],
        router=lambda ctx: boss if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )
    with pytest.raises(BudgetExceeded, match="max_requests=2"):
        await office.run("go", budget=budget)  # the boss's, the inner run's: no room for a third
    assert (len(boss_model.requests), len(inner_model.requests)) == (1, 1)
    assert (await budget_figures(budget)).requests == 2


async def test_a_key_given_twice_is_reserved_on_once_with_the_tighter_caps() -> None:
    """The same key twice (in one list, or a sub-run whose network has its caller's budget,
    as `Network(budget=...)` on both gives it) opened two accounts on one ledger row: each
    request counted twice, so `max_requests=3` allowed one request and a half."""
    store = MemoryStore()
    acme = SharedBudget("tenant:acme", max_requests=4, store=store)
    tighter = SharedBudget("tenant:acme", max_requests=2, store=store)
    network = network_of(ScriptedModel(lambda request: "ok"))
    await network.run("hi", budget=[acme, acme])
    assert (await budget_figures(acme)).requests == 1
    await network.run("hi", budget=[acme, tighter])
    with pytest.raises(BudgetExceeded, match="max_requests=2"):
        await network.run("hi", budget=[acme, tighter])  # 2 spent: the tighter cap holds
    assert (await budget_figures(acme)).requests == 2

    shared = SharedBudget("tenant:acme", max_requests=10, store=MemoryStore())
    helper = Network("helper", agents=[Agent("h", model=ScriptedModel(["tides"]))], budget=shared)
    boss_model = ScriptedModel(
        [AssistantMessage(None, [ToolCall("c1", "helper", {"input": "tides"})]), "ok"]
    )
    boss = Agent("boss", tools=[helper.as_tool(description="Helps.")], model=boss_model)
    office = Network(
        "office",
        agents=[boss],
        router=lambda ctx: boss if ctx.last_result is None or ctx.last_result.tool_calls else None,
        budget=shared,
    )
    assert (await office.run("go")).output == "ok"
    assert (await budget_figures(shared)).requests == 3  # the boss's two, the helper's one


class _Shapeless:
    """A model of one's own answering `answer` as it is (no `ModelResponse`'s shape)."""

    name = "shapeless"

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> Any:
        return self.answer


@pytest.mark.parametrize(
    "answer", [None, ModelResponse(message=AssistantMessage("hi"), usage=None)]
)
async def test_an_answer_of_the_wrong_shape_settles_what_it_reserved(answer: Any) -> None:
    """The metered model read `response.usage.prompt_tokens` first: a custom model's None (or
    a usage that is None) raised AttributeError there, and the request's hold stayed held
    until `hold_seconds` passed. Now it settles what it reserved, as a bad figure does, and
    the agent's `ModelError` says what is wrong."""
    budget = SharedBudget("k", store=MemoryStore())
    network = network_of(_Shapeless(answer), params={"max_tokens": 10})
    with pytest.raises(ModelError, match="model 'shapeless' of agent 'a' answered"):
        await network.run("hi", budget=budget)
    figures = await budget_figures(budget)
    assert (figures.requests, figures.held_tokens, figures.held_requests) == (1, 0, 0)
    assert figures.tokens > 10  # what it reserved: the prompt and the 10 asked for
