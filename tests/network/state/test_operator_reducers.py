"""A function of Python's `operator` module as a key's handler, as LangGraph users write their
reducers (`Annotated[list[str], operator.add]`): it starts from the key type's empty value on
the key's first write, as LangGraph's `BinaryOperatorAggregate` does (its test `test_binop`:
an `int` channel with `operator.add` reads 0 before any write). Before, the first write called
`operator.add(None, [...])` and failed with a bare TypeError naming no key."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, Parallel, State, ThreadRef
from network.threads import MemoryStore

pytestmark = pytest.mark.anyio


class Notes(BaseModel):
    """A LangGraph-style state: reducers on keys without defaults."""

    items: Annotated[list[str], operator.add]
    total: Annotated[int, operator.add]
    text: Annotated[str, operator.add]
    tags: Annotated[dict[str, str], operator.or_]


def test_an_operator_reducer_starts_from_the_types_empty_value() -> None:
    kv = State(schema=Notes).kv
    assert not kv.has("items")  # no default: the key starts absent, as before
    kv.set("items", ["a"])
    kv.set("items", ["b"])
    kv.set("total", 2)
    kv.set("total", 3)
    kv.set("text", "ab")
    kv.set("text", "c")
    kv.set("tags", {"a": "1"})
    kv.set("tags", {"b": "2"})
    assert kv.data == {
        "items": ["a", "b"],
        "total": 5,
        "text": "abc",
        "tags": {"a": "1", "b": "2"},
    }


def test_the_same_in_a_dict_schema_and_as_one_writes_handler() -> None:
    kv = State(schema={"items": {"type": list[str], "handler": operator.add}}).kv
    kv.set("items", ["a"])
    kv.set("items", ["b"])
    kv.set("count", 4, handler=operator.add)  # untyped: no empty value, stored as given
    kv.set("count", 1, handler=operator.add)
    assert kv.data == {"items": ["a", "b"], "count": 5}


def test_a_type_with_no_empty_value_stores_the_first_write_as_given() -> None:
    kv = State(schema={"maybe": {"type": list[str] | None, "handler": operator.add}}).kv
    kv.set("maybe", ["a"])
    kv.set("maybe", ["b"])
    assert kv.get("maybe") == ["a", "b"]


def test_a_handler_of_ones_own_still_gets_none_on_the_first_write() -> None:
    seen: list[Any] = []

    def keep(current: Any, new: Any) -> Any:
        seen.append(current)
        return new

    kv = State(schema={"items": {"type": list[str], "handler": keep}}).kv
    kv.set("items", ["a"])
    assert seen == [None]


async def test_tools_and_parallel_branches_write_through_an_operator_reducer() -> None:
    @tool
    def note(ctx: ToolContext, text: str) -> str:
        """Note a text."""
        ctx.kv.set("items", [text])
        assert ctx.kv.get("items")[-1] == text  # the tool reads its own staged write
        return "noted"

    def agent(name: str) -> Agent:
        def script(request: Any) -> Any:
            return "done" if request.history[-1].role == "tool" else call("note", text=name)

        return Agent(name, tools=[note], model=ScriptedModel(script))

    first, second = agent("first"), agent("second")
    both = Parallel(first, second)
    network = Network(
        "notes",
        agents=[first, second],
        router=lambda ctx: both if ctx.last_result is None else None,
        state_schema=Notes,
    )
    result = await network.run("go")
    assert result["items"] == ["first", "second"]


async def test_a_shared_key_on_a_thread_starts_from_the_empty_value_too() -> None:
    @tool
    def count(ctx: ToolContext) -> str:
        """Count a visit."""
        ctx.kv.set("user:visits", 1)
        return "counted"

    def script(request: Any) -> Any:
        return "done" if request.history[-1].role == "tool" else call("count")

    counter = Agent("counter", tools=[count], model=ScriptedModel(script))
    network = Network(
        "visits",
        agents=[counter],
        state_schema={"user:visits": {"type": int, "handler": operator.add}},
    )
    store = MemoryStore()
    for thread in ("one", "two"):
        result = await network.run("go", thread=ThreadRef(thread, user_id="ann", store=store))
    assert result["user:visits"] == 2
