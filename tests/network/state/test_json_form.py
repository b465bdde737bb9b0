"""State, results and messages round-trip through JSON."""

import json
from collections.abc import Sequence
from typing import Annotated, Any, Generic, TypeVar

import pytest
from pydantic import BaseModel, Field

from agents import Agent, ScriptedModel, call, tool
from network import InferenceResult, Network, State, StateError, StateSchema, merge_dicts
from network.history.messages import message_list_adapter


def longest(current: Any, new: Any) -> Any:
    return new if current is None or len(new) > len(current) else current


T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    items: list[T]


@pytest.mark.anyio
async def test_state_round_trips_with_schema_data_results_and_messages() -> None:
    @tool(outputs_to_state={"files": {"source": "files"}})
    def write(files: dict[str, str]) -> dict[str, Any]:
        return {"files": files}

    model = ScriptedModel([call("write", files={"a.py": "1"}), "done"])
    agent = Agent("coder", tools=[write], model=model, output_key="summary")
    schema = StateSchema(
        {
            "files": {"type": dict[str, str], "handler": merge_dicts},
            "summary": {"type": str | None},
            "best": {"type": str, "handler": longest},
            "scores": {"type": list[int]},
        },
        closed=False,
    )
    network = Network(
        "n",
        agents=[agent],
        router=lambda c: agent if c.call_count < 2 else None,
        state_schema=schema,
    )
    result = await network.run("x", state={"best": "abc", "scores": [1], "temp:x": 1})
    original = result.state

    text = original.to_json()
    loaded = State.from_json(text)

    assert loaded == original
    assert json.loads(text)["schema"]["keys"]["best"] == {
        "type": "str",
        "handler": "tests.network.state.test_json_form:longest",
    }
    assert json.loads(text)["schema"]["keys"]["summary"]["type"] == "str | None"
    assert "temp:x" not in loaded.data
    assert loaded.schema.spec("best").handler is longest
    loaded.kv.set("scores", 2)  # handlers and types work after loading
    loaded.kv.set("best", "a")
    assert loaded.kv.get("scores") == [1, 2] and loaded.kv.get("best") == "abc"
    assert [r.agent for r in loaded.results] == ["coder", "coder"]


def test_results_and_messages_round_trip_through_json() -> None:
    from network import AssistantMessage, ToolCall, ToolMessage, UserMessage

    messages = [
        UserMessage(content="hi"),
        AssistantMessage(content=None, tool_calls=[ToolCall(id="1", name="t", arguments={"a": 1})]),
        ToolMessage(tool_call_id="1", content="ok", is_error=False),
    ]
    adapter = message_list_adapter()
    assert adapter.validate_json(adapter.dump_json(messages)) == messages
    result = InferenceResult(agent="a", input="hi", history=messages[:1], output=messages[1:2])
    assert InferenceResult.from_json(result.to_json()) == result


def test_an_untyped_key_holding_a_model_round_trips_as_its_json_form() -> None:
    """docs/state.md: an untyped key may hold a pydantic model instance, which reads back
    after a reload as its JSON form; `to_json` raised json's TypeError on it."""
    from pydantic import BaseModel

    class Doc(BaseModel):
        text: str

    state = State()
    state.kv.set("doc", Doc(text="a"))
    state.kv.set("docs", [Doc(text="b")])
    state.kv.set("pair", (1, 2))
    loaded = State.from_json(state.to_json())
    assert loaded.kv.data == {"doc": {"text": "a"}, "docs": [{"text": "b"}], "pair": [1, 2]}


def test_lambda_handlers_cannot_be_serialized_and_say_which_key() -> None:
    state = State(schema={"k": {"type": int, "handler": lambda a, b: b}})
    with pytest.raises(StateError, match="'k'"):
        state.to_json()


def test_state_json_from_before_the_state_package_still_loads() -> None:
    """Thread stores keep state JSON that names ready handlers by their old import path."""
    from network import State, merge_dicts

    text = State(
        {"files": {"a.py": "x"}}, schema={"files": {"type": dict[str, str], "handler": merge_dicts}}
    ).to_json()
    old = text.replace("network.state.handlers:", "network.handlers:")
    assert old != text
    restored = State.from_json(old)
    restored.kv.set("files", {"b.py": "y"})
    assert restored.kv.get("files") == {"a.py": "x", "b.py": "y"}


def test_a_schema_entry_without_a_handler_loads_with_the_type_s_default() -> None:
    from network import StateError, merge_lists, replace_values
    from network.state.json_form import schema_from_dict

    schema = dict(
        schema_from_dict({"keys": {"tags": {"type": "list[str]"}, "n": {"type": "int"}}}).items()
    )
    assert schema["tags"].handler is merge_lists
    assert schema["n"].handler is replace_values
    with pytest.raises(StateError, match="'n': handler 'no.such.module:f' cannot be imported"):
        schema_from_dict({"keys": {"n": {"type": "int", "handler": "no.such.module:f"}}})
    with pytest.raises(StateError, match="'n': a schema entry needs a 'type'"):
        schema_from_dict({"keys": {"n": {"handler": "x:y"}}})


@pytest.mark.anyio
async def test_a_state_loaded_from_json_carries_results_messages_and_keys_into_a_run() -> None:
    agent = Agent("a", model=ScriptedModel(lambda request: "hi"))
    counts: list[int] = []

    def router(ctx: Any) -> Any:
        counts.append(ctx.call_count)
        return agent if ctx.call_count == 0 else None

    network = Network("n", agents=[agent], router=router)
    first = await network.run("one", state={"user": {"name": "Ann"}})
    loaded = State.from_json(first.state.to_json())
    second = await network.run("two", state=loaded)
    assert [r.agent for r in second.results] == ["a", "a"]  # the earlier call, then this one
    assert [m.content for m in second.messages] == ["one", "hi", "two", "hi"]
    assert second["user"] == {"name": "Ann"}
    assert counts == [0, 1, 0, 1]  # call_count counts this run's calls
    assert len(loaded.results) == 1  # the given State is copied, never changed


@pytest.mark.anyio
async def test_a_parsed_serialized_state_given_as_data_is_refused_pointing_to_from_json() -> None:
    # AgentKit's network tests run `network.run(input, {state: JSON.parse(saved)})`; here the
    # parsed form given as `state=` was read as data keys, and the run failed on its
    # "messages" part ("the conversation's name ... never a key"), not saying what to do.
    agent = Agent("a", model=ScriptedModel(lambda request: "hi"))
    network = Network("n", agents=[agent])
    saved = State({"user": "Ann"}, results=[InferenceResult(agent="a")]).to_json()
    with pytest.raises(StateError, match=r"State\.from_json") as caught:
        await network.run("two", state=json.loads(saved))
    assert "State.to_json" in str(caught.value)
    with pytest.raises(StateError, match=r"State\.from_json"):
        State(json.loads(saved))
    # a key named "format" holding anything else is data, as before
    assert State({"format": "csv", "data": {}}).kv.data == {"format": "csv", "data": {}}


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "null",
        "5",
        '"state"',
        '{"format": "agent-network/state@1"}',
        '{"format": "agent-network/state@1", "schema": 5, "data": {}, "results": [],'
        ' "messages": []}',
        '{"format": "agent-network/state@1", "schema": {}, "data": {}, "results": 5,'
        ' "messages": []}',
        '{"format": "agent-network/state@1", "schema": {}, "data": {}, "results": [],'
        ' "messages": {}}',
        "{",  # not JSON: was a bare JSONDecodeError
        "",
        b"\xff",
        None,  # not text: was a TypeError from json.loads
        5,
    ],
)
def test_json_that_is_no_serialized_state_is_a_state_error(text: Any) -> None:
    # it was an AttributeError ('list' object has no attribute 'get'), a KeyError or a
    # TypeError, none naming what was wrong
    with pytest.raises(StateError, match="not a serialized state"):
        State.from_json(text)


def test_a_type_whose_constraints_json_cannot_keep_is_refused_naming_the_key() -> None:
    # The name dropped `Annotated`'s metadata: the loaded schema took -1 into a key declared
    # `ge=0`, silently, as a lambda handler would have lost its merge (refused the same way).
    state = State({"n": 1}, schema={"n": {"type": Annotated[int, Field(ge=0)]}})
    with pytest.raises(StateError, match="'n'.*Annotated") as refused:
        state.to_json()
    assert refused.value.key == "n"


def test_a_local_class_as_a_key_s_type_is_refused_when_written_not_when_read() -> None:
    # It was written, and `from_json` failed on it with a ValueError naming no key.
    class Local(BaseModel):
        a: int

    state = State(schema={"doc": {"type": Local}})
    with pytest.raises(StateError, match="'doc'.*module level") as refused:
        state.to_json()
    assert refused.value.key == "doc"


def test_a_type_name_that_cannot_be_read_back_is_a_state_error_naming_the_key() -> None:
    from network.state.json_form import schema_from_dict

    with pytest.raises(StateError, match="'doc'.*no.such:Thing") as refused:
        schema_from_dict({"keys": {"doc": {"type": "no.such:Thing"}}})
    assert refused.value.key == "doc"
    with pytest.raises(StateError, match="no.such:Model"):
        schema_from_dict({"model": "no.such:Model", "keys": {}})


def test_variadic_tuples_abstract_generics_and_generic_models_round_trip() -> None:
    # Haystack's test_state_to_dict / from_dict: a schema's types come back as they were. A
    # `tuple[int, ...]` was named `tuple[int, Ellipsis]`, and `Sequence[str]` or a generic
    # model `Page[int]` "took no type arguments": to_json refused each, naming the key.
    schema = {
        "span": {"type": tuple[int, ...]},
        "names": {"type": Sequence[str]},
        "page": {"type": Page[int]},
        "pages": {"type": dict[str, Page[str]]},
    }
    given = {"span": (1, 2, 3), "names": ["a"], "page": Page[int](items=[1]), "pages": {}}
    state = State(given, schema=schema)
    text = state.to_json()
    assert json.loads(text)["schema"]["keys"]["span"]["type"] == "tuple[int, ...]"
    loaded = State.from_json(text)
    assert loaded.kv.data == state.kv.data
    assert loaded.kv.schema.spec("page").type is Page[int]
    loaded.kv.set("pages", {"p": {"items": ["x"]}})
    assert loaded.kv.get("pages") == {"p": Page[str](items=["x"])}


@pytest.mark.parametrize("name", ["...", "list[...]", "tuple[..., ...]", "str | ...", "str[int]"])
def test_a_type_name_with_an_ellipsis_out_of_place_is_refused(name: str) -> None:
    from network.state.typenames import parse_type

    with pytest.raises(ValueError):
        parse_type(name)
