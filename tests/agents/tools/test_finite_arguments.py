"""A tool's arguments refuse NaN and infinity, typed or not, at the top or nested inside."""

import math
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel, Field

from agents import Agent, ScriptedModel, tool
from agents.models._tool_arguments import parse_arguments
from network import AssistantMessage, Network, ToolCall, ToolError

NAN, INF = float("nan"), float("inf")


class Line(BaseModel):
    label: str
    price: float
    note: Any = None


class Tree(BaseModel):
    value: float
    kids: list["Tree"] = []


@dataclass
class Point:
    x: float


@pytest.mark.anyio
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
async def test_a_models_non_finite_number_is_a_tool_error_naming_tool_and_argument(
    literal: str,
) -> None:
    ran: list[float] = []

    @tool
    def pay(amount: float, memo: str = "") -> str:
        """Pay an amount."""
        ran.append(amount)
        return f"paid {amount}"

    # what a provider's answer becomes: its arguments text read by json.loads, which takes
    # NaN and Infinity literals (and 1e999 as infinity)
    arguments = parse_arguments(f'{{"amount": {literal}, "memo": "rent"}}')
    answer = AssistantMessage(tool_calls=[ToolCall(id="c1", name="pay", arguments=arguments)])
    agent = Agent("a", tools=[pay], model=ScriptedModel([answer, "sorry"]))
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    result = await network.run("x")
    record = result.results[0].tool_calls[0]
    assert ran == []  # the tool never ran
    assert record.is_error
    assert "tool 'pay': invalid arguments: amount: Input should be a finite number" in (
        record.content
    )
    assert result.output == "sorry"  # the model read the error and the run went on


@dataclass
class Case:
    arguments: dict[str, Any]
    where: str


CASES = [
    Case({"price": NAN}, "price: Input should be a finite number"),
    Case({"maybe": INF}, "maybe: Input should be a finite number"),
    Case({"prices": [1.0, -INF]}, "prices.1: Input should be a finite number"),
    Case({"by_name": {"a": NAN}}, "by_name.a: Input should be a finite number"),
    Case({"loose": {"a": [1, {"b": NAN}]}}, "loose: Input should be a finite number, got nan at "),
    Case({"items": [1, INF]}, "items: Input should be a finite number, got inf at [1]"),
    Case({"anything": NAN}, "anything: Input should be a finite number, got nan"),
    Case({"line": {"label": "x", "price": NAN}}, "line: Input should be a finite number"),
    Case({"line": {"label": "x", "price": 1, "note": [INF]}}, "got inf at ['note'][0]"),
    Case({"loose": {"a": [{"b": 1.0}, {"c": (1, -INF)}]}}, "got -inf at ['a'][1]['c'][1]"),
    Case({"tree": {"value": 1, "kids": [{"value": NAN}]}}, "at ['kids'][0]['value']"),
    Case({"point": {"x": NAN}}, "point.x: Input should be a finite number"),
    Case({"price": "NaN"}, "price: Input should be a finite number"),
    Case({"count": NAN}, "count: Input should be a finite number"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: next(iter(case.arguments)))
def test_non_finite_numbers_are_refused_wherever_they_sit(case: Case) -> None:
    checkout = _checkout()
    with pytest.raises(ToolError) as caught:
        checkout.validate(case.arguments)
    message = str(caught.value)
    assert message.startswith("tool 'checkout': invalid arguments: ")
    assert case.where in message
    assert caught.value.tool == "checkout"


def test_finite_arguments_validate_as_before() -> None:
    checkout = _checkout()
    arguments = {
        "price": 2.5,
        "maybe": None,
        "prices": [1, 2.0],
        "by_name": {"a": 1e300},
        "loose": {"a": [1, {"b": -0.0}], "c": "NaN"},  # a string, not a number
        "items": [1, "x"],
        "anything": [1.5],
        "line": {"label": "x", "price": 3, "note": {"k": 1.0}},
        "tree": {"value": 1, "kids": [{"value": 2}]},
        "point": {"x": 0.5},
        "count": 3,
    }
    validated = checkout.validate(arguments)
    assert validated["price"] == 2.5 and validated["loose"] == {"a": [1, {"b": -0.0}], "c": "NaN"}
    assert validated["line"] == Line(label="x", price=3, note={"k": 1.0})
    assert validated["tree"] == Tree(value=1, kids=[Tree(value=2)])
    assert validated["point"] == Point(0.5)


def test_a_field_that_asks_for_nan_still_gets_it() -> None:
    @tool
    def measure(reading: float = Field(allow_inf_nan=True)) -> float:
        """Record a reading (NaN: no reading)."""
        return reading

    assert math.isnan(measure.validate({"reading": NAN})["reading"])


def test_a_value_holding_itself_ends_the_walk() -> None:
    @tool
    def keep(anything: Any) -> str:
        """Keep anything."""
        return "kept"

    looped: list[Any] = [1.0]
    looped.append(looped)
    assert keep.validate({"anything": looped})["anything"] is looped


def _checkout() -> Any:
    @tool
    def checkout(
        price: float = 0,
        maybe: float | None = None,
        prices: list[float] | None = None,
        by_name: dict[str, float] | None = None,
        loose: dict | None = None,  # type: ignore[type-arg]
        items: list | None = None,  # type: ignore[type-arg]
        anything: Any = None,
        line: Line | None = None,
        tree: Tree | None = None,
        point: Point | None = None,
        count: int = 0,
    ) -> str:
        """Check out."""
        return "done"

    return checkout
