"""Every model request of a run with a shared budget reserves first
(`network.capabilities.budgets.metered`):
a request that does not fit is refused before it is sent, a sent one settles what it really
spent, a failed one gives its reservation back; re-asks, a routing agent's requests and a
sub-run's requests reserve too."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel, call, tool
from agents.models.base import ModelRequest, ModelResponse
from agents.models.price import Price
from network import BudgetExceeded, BudgetFigures, ModelError, Network, SharedBudget
from network.history.messages import AssistantMessage, ToolCall
from network.history.results import Usage
from network.threads import MemoryStore, budget_figures
from routers import routing_agent

pytestmark = pytest.mark.anyio

USAGE = Usage(5, 20, 25)
PRICE = Price(input=1_000_000.0, output=2_000_000.0)  # $1 an input token, $2 an output one


class Counting:
    """Answers `answers` in turn, each with `usage`; remembers what the budget held while
    each request was under way (read from the ledger, as the request sees it)."""

    name = "counting"

    def __init__(
        self,
        answers: list[Any],
        usage: Usage = USAGE,
        budget: SharedBudget | None = None,
        price: Price | None = None,
    ) -> None:
        self.answers = list(answers)
        self.usage = usage
        self.budget = budget
        self.price = price
        self.requests: list[ModelRequest] = []
        self.held_while_asked: list[BudgetFigures] = []

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
        self.requests.append(request)
        if self.budget is not None:
            self.held_while_asked.append(await budget_figures(self.budget))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        message = answer if isinstance(answer, AssistantMessage) else AssistantMessage(answer)
        cost = self.price.cost(self.usage) if self.price is not None else None
        return ModelResponse(message=message, usage=self.usage, cost_usd=cost)


@tool
def look(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: found"


def agent_on(model: Any, **options: Any) -> Network:
    agent = Agent("a", tools=[look], model=model, **options)
    return Network(
        "n",
        agents=[agent],
        router=lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )


async def test_a_request_that_does_not_fit_is_refused_before_it_is_sent() -> None:
    # the first request reserves about 150 tokens (100 of them to answer) and spends 25; the
    # second, with the tool's call and result in its history, asks for about 190
    budget = SharedBudget("tenant:acme", max_tokens=200, store=MemoryStore())
    model = Counting([call_look(), "done"])
    with pytest.raises(BudgetExceeded) as refused:
        await agent_on(model, params={"max_tokens": 100}).run("go", budget=budget)
    assert len(model.requests) == 1  # the second was never sent
    error = refused.value
    assert error.budget == "tenant:acme" and error.limit == "max_tokens"
    assert error.spent == 25 and error.held == 0 and 175 < error.asked < 250
    assert error.partial_result.results[0].agent == "a"  # type: ignore[attr-defined]
    figures = await budget_figures(budget)
    assert (figures.tokens, figures.requests, figures.held_tokens) == (25, 1, 0)


async def test_the_reservation_is_the_input_plus_the_maximum_output() -> None:
    store = MemoryStore()
    budget = SharedBudget("t", store=store, output_estimate=700)
    model = Counting(["done", "done"], budget=budget)
    await agent_on(model, params={"max_tokens": 300}).run("x" * 400, budget=budget)
    (held,) = model.held_while_asked
    # the user's 400 characters (about 100 tokens + 4), the tool schema, and 300 to answer
    schema = len(json.dumps(model.requests[0].tools)) // 4
    assert held.held_tokens == 104 + schema + 300
    assert held.held_requests == 1
    await agent_on(model).run("x" * 400, budget=budget)  # no max_tokens: the estimate
    assert model.held_while_asked[1].held_tokens == 104 + schema + 700
    figures = await budget_figures(budget)
    assert (figures.tokens, figures.requests, figures.held_tokens) == (50, 2, 0)


async def test_cost_is_reserved_at_the_models_price_and_settled_at_its_answers() -> None:
    budget = SharedBudget("t", max_cost_usd=10_000.0, store=MemoryStore())
    model = Counting(["done"], budget=budget, price=PRICE)
    await agent_on(model, params={"max_tokens": 10}).run("hi", budget=budget)
    (held,) = model.held_while_asked
    prompt = held.held_tokens - 10
    assert held.held_cost_usd == pytest.approx(prompt * 1.0 + 10 * 2.0)
    figures = await budget_figures(budget)
    assert figures.cost_usd == pytest.approx(5 * 1.0 + 20 * 2.0)
    assert figures.held_cost_usd == 0


async def test_a_failed_request_gives_its_reservation_back() -> None:
    budget = SharedBudget("t", max_tokens=10_000, store=MemoryStore())
    model = Counting([ModelError("the provider is down", model="counting")])
    with pytest.raises(ModelError):
        await agent_on(model).run("go", budget=budget)
    figures = await budget_figures(budget)
    assert (figures.tokens, figures.requests, figures.held_tokens, figures.held_requests) == (
        0,
        0,
        0,
        0,
    )


class Verdict(BaseModel):
    answer: int


async def test_a_typed_answers_re_ask_reserves_again() -> None:
    budget = SharedBudget("t", store=MemoryStore())
    model = Counting(["not json", '{"answer": 42}'], budget=budget)
    agent = Agent("judge", model=model, output_type=Verdict, output_mode="prompted")
    result = await Network("n", agents=[agent]).run("go", budget=budget)
    assert result.results[-1].output_value == Verdict(answer=42)
    assert [figures.held_requests for figures in model.held_while_asked] == [1, 1]
    assert (await budget_figures(budget)).requests == 2


async def test_a_routing_agents_requests_reserve_too() -> None:
    budget = SharedBudget("t", max_requests=3, store=MemoryStore())
    router = ScriptedModel(
        [call("select_agent", name="a", reason="go"), call("select_agent", name="a", reason="2")]
    )
    worker = Agent("a", model=ScriptedModel(["one", "two"]))
    team = Network("team", agents=[worker], router=routing_agent(router))
    with pytest.raises(BudgetExceeded, match="max_requests=3"):
        await team.run("go", budget=budget)
    assert len(router.requests) == 2 and len(worker.model.requests) == 1  # type: ignore[union-attr]
    assert (await budget_figures(budget)).requests == 3


async def test_a_sub_runs_requests_reserve_on_the_callers_budget() -> None:
    budget = SharedBudget("t", max_requests=2, store=MemoryStore())
    inner = Counting([call_look(), "found"])
    helper = Agent("helper", tools=[look], model=inner)
    boss = Counting([AssistantMessage(None, [_tool_call("helper", input="tides")]), "ok"])
    supervisor = Agent("boss", tools=[helper.as_tool(description="Helps.")], model=boss)
    office = Network(
        "office",
        agents=[supervisor],
        router=lambda ctx: (
            supervisor if ctx.last_result is None or ctx.last_result.tool_calls else None
        ),
    )
    with pytest.raises(BudgetExceeded, match="max_requests=2"):
        await office.run("go", budget=budget)
    # the boss's request, the helper's first; the helper's second was refused (the tool's
    # error went to the boss's model), and so was the boss's next
    assert len(boss.requests) == 1 and len(inner.requests) == 1
    assert (await budget_figures(budget)).requests == 2


def _tool_call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(f"call_{name}", name, arguments)


def call_look() -> AssistantMessage:
    return AssistantMessage(None, [_tool_call("look", topic="tides")])


class Misreporting(Counting):
    """A model of one's own that reports `cost` whatever it spent."""

    def __init__(self, usage: Usage, cost: float, budget: SharedBudget) -> None:
        super().__init__(["done"], usage=usage, budget=budget)
        self.cost = cost

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
        response = await super().complete(request, on_chunk)
        response.cost_usd = self.cost
        return response


@pytest.mark.parametrize(
    ("usage", "cost"),
    [
        (Usage(-1_000, -5, -1_005), -3.0),  # gave the key back what others spent
        (Usage(5, 20, 25), float("nan")),  # failed the run at the store, once paid
        (Usage(5, 20, 25), float("inf")),  # blocked the key for good
        (Usage(10**30, 1, 5), 1.0),  # past SQLite's integers: an OverflowError
        (Usage(5, 20, 25), 10**400),  # no double holds it
    ],
    ids=["negative", "nan cost", "infinite cost", "absurd count", "absurd cost"],
)
async def test_a_request_whose_model_reports_no_figure_counts_what_it_reserved(
    tmp_path: Any, usage: Usage, cost: float
) -> None:
    budget = SharedBudget("t", max_tokens=100_000, store=f"sqlite:///{tmp_path}/budgets.db")
    model = Misreporting(usage, cost, budget)
    reported_tokens = usage.prompt_tokens >= 0 and usage.prompt_tokens < 2**53
    if reported_tokens:
        await agent_on(model, params={"max_tokens": 10}).run("hi", budget=budget)
    else:  # settled on the ledger, then refused by the agent (no count: a ModelError)
        with pytest.raises(ModelError, match="not a token count from 0 to 2"):
            await agent_on(model, params={"max_tokens": 10}).run("hi", budget=budget)
    (held,) = model.held_while_asked
    figures = await budget_figures(budget)
    assert figures.tokens == (25 if reported_tokens else held.held_tokens)
    assert figures.cost_usd == (1.0 if cost == 1.0 else held.held_cost_usd)
    assert (figures.requests, figures.held_tokens, figures.held_requests) == (1, 0, 0)


async def test_an_absurd_max_tokens_parameter_asks_no_more_than_a_ledger_counts(
    tmp_path: Any,
) -> None:
    budget = SharedBudget("t", store=f"sqlite:///{tmp_path}/budgets.db")
    model = Counting(["done"], budget=budget)
    await agent_on(model, params={"max_tokens": 10**30}).run("hi", budget=budget)
    assert model.held_while_asked[0].held_tokens == 2**53 - 1
    assert (await budget_figures(budget)).tokens == 25
