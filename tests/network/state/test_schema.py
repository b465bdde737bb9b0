"""State schemas (dict or pydantic), merge handlers, validated writes, safe reads, seeds."""

import typing
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from agents import Agent, ScriptedModel
from network import (
    ConfigurationError,
    Network,
    State,
    StateError,
    StateSchema,
    StateValidationError,
    merge_dicts,
    merge_lists,
    replace_values,
)


def keep_max(current: Any, new: Any) -> Any:
    return new if current is None else max(current, new)


def test_dict_schema_declares_types_and_handlers() -> None:
    state = State(schema={"docs": {"type": list[str]}, "best": {"type": int, "handler": keep_max}})
    state.kv.set("docs", ["a"])
    state.kv.set("docs", "b")  # a scalar is appended as one item
    state.kv.set("best", 3)
    state.kv.set("best", 1)
    assert state.data == {"docs": ["a", "b"], "best": 3}


def test_pydantic_schema_with_handlers_in_annotated_metadata() -> None:
    class Plan(BaseModel):
        steps: list[str] = []
        files: Annotated[dict[str, str], merge_dicts] = Field(default_factory=dict)
        score: Annotated[int, keep_max] = 0
        note: str | None = None

    state = State(schema=Plan)
    # defaults seed, except None: `note` starts absent (see test_kv_has_and_none_defaults)
    assert state.data == {"steps": [], "files": {}, "score": 0}
    state.kv.set("files", {"a.py": "1"})
    state.kv.set("files", {"b.py": "2"})
    state.kv.set("score", 7)
    state.kv.set("score", 2)
    assert state.kv.get("files") == {"a.py": "1", "b.py": "2"}
    assert state.kv.get("score") == 7


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"docs": {"handler": merge_lists}}, "'docs'.*no 'type'"),
        ({"docs": {"type": 42}}, "'docs'.*not a type"),
        ({"docs": {"type": list, "handler": "merge"}}, "'docs'.*not callable"),
        ({"docs": list}, "'docs'"),
        # a handler that cannot take (current, new): every write was a TypeError naming no key
        ({"docs": {"type": list, "handler": lambda current: current}}, "'docs'.*handler\\(cur"),
        ({"n": {"type": int, "handler": lambda a, b, c: a}}, "'n'.*fn\\(current, new\\)"),
    ],
)
def test_bad_schemas_fail_at_construction_naming_the_key(schema: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        State(schema=schema)


def test_undeclared_keys_are_untyped_replace_keys_unless_the_schema_is_closed() -> None:
    open_state = State(schema={"a": {"type": int}})
    open_state.kv.set("free", [1])
    open_state.kv.set("free", [2])
    assert open_state.kv.get("free") == [2]

    closed = State(schema=StateSchema({"a": {"type": int}}, closed=True))
    with pytest.raises(StateError, match="'free'.*not declared"):
        closed.kv.set("free", 1)

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        a: int = 0

    with pytest.raises(StateError, match="'other'"):
        State(schema=Strict).kv.set("other", 1)


@pytest.mark.parametrize("closed", ["no", 0, 1, "false", float("nan")])
def test_closed_is_a_bool_or_refused(closed: Any) -> None:
    """`closed="no"` closed the schema (any truthy value did) and `closed=0` opened a pydantic
    model's `extra="forbid"` one; a schema that says whether it is closed says it with a bool."""

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        a: int = 0

    for schema in ({"a": {"type": int}}, Strict, None):
        with pytest.raises(ConfigurationError, match="StateSchema: closed must be True or False"):
            StateSchema(schema, closed=closed)


def test_default_handlers_lists_merge_optional_lists_and_others_replace() -> None:
    state = State(
        schema={
            "items": {"type": list[int]},
            "plain": {"type": list},
            "maybe": {"type": list[int] | None},
            "name": {"type": str},
        }
    )
    for value in ([1], [2]):
        state.kv.set("items", value)
        state.kv.set("plain", value)
        state.kv.set("maybe", value)
        state.kv.set("name", str(value))
    assert state.data == {"items": [1, 2], "plain": [1, 2], "maybe": [2], "name": "[2]"}


def test_typing_generics_without_parameters_are_the_classes_they_stand_for() -> None:
    # Haystack's test_is_list_type / test_state_to_dict_typing_list: `List` is a list type,
    # merged with merge_lists. `{"type": typing.List}` raised an IndexError (no key named),
    # and a bare `typing.Dict` (or `Optional[List]`) was named `dict[]`, which to_json refused.
    schema = {
        "items": {"type": typing.List},  # noqa: UP006 (the typing spelling is the subject)
        "maybe": {"type": typing.Optional[typing.List]},  # noqa: UP006, UP045
        "meta": {"type": typing.Dict, "handler": merge_dicts},  # noqa: UP006
        "tags": {"type": typing.Set},  # noqa: UP006
    }
    state = State(schema=schema)
    for value in ([1], [2]):
        state.kv.set("items", value)
        state.kv.set("maybe", value)
    state.kv.set("meta", {"a": 1})
    state.kv.set("meta", {"b": 2})
    state.kv.set("tags", ["x"])
    assert state.data == {"items": [1, 2], "maybe": [2], "meta": {"a": 1, "b": 2}, "tags": {"x"}}
    back = State.from_json(state.to_json())
    assert back.data == state.data
    names = "items: list, maybe: list | None, meta: dict, tags: set"
    assert repr(back.kv.schema) == f"StateSchema({names})"


def test_custom_handler_sees_none_first_and_per_call_handler_overrides() -> None:
    calls = []

    def record(current: Any, new: Any) -> Any:
        calls.append((current, new))
        return (current or 0) + new

    state = State(schema={"total": {"type": int, "handler": record}})
    state.kv.set("total", 2)
    state.kv.set("total", 3)
    state.kv.set("total", 100, handler=replace_values)
    assert calls == [(None, 2), (2, 3)]
    assert state.kv.get("total") == 100
    state.kv.set("tags", ["a"], handler=merge_lists)
    state.kv.set("tags", ["b"], handler=merge_lists)
    assert state.kv.get("tags") == ["a", "b"]


def test_every_write_is_validated_and_the_validated_value_is_stored() -> None:
    state = State(schema={"count": {"type": int}, "ids": {"type": list[int]}})
    state.kv.set("count", "5")
    state.kv.set("ids", ["1", 2])
    assert state.kv.get("count") == 5
    assert state.kv.get("ids") == [1, 2]


def test_a_rejected_write_names_key_and_type_and_changes_nothing() -> None:
    state = State(schema={"count": {"type": int}, "ids": {"type": list[int]}})
    state.kv.set("count", 1)
    state.kv.set("ids", [1])
    before = (state.data, state.kv.take_ops(), len(state.history_of("ids")))
    with pytest.raises(StateValidationError) as caught:
        state.kv.set("ids", [2, "x"])
    assert caught.value.key == "ids"
    assert "int" in caught.value.expected and "'ids'" in str(caught.value)
    with pytest.raises(StateValidationError, match="'count' expects int"):
        state.kv.set("count", "many")
    assert (state.data, state.kv.take_ops(), len(state.history_of("ids"))) == (
        before[0],
        [],
        before[2],
    )


def test_validation_applies_after_the_handler_merges() -> None:
    from typing import Annotated as A

    from annotated_types import MaxLen

    state = State(schema={"top3": {"type": A[list[int], MaxLen(3)]}})
    state.kv.set("top3", [1, 2])
    state.kv.set("top3", [3])
    with pytest.raises(StateValidationError, match="top3"):
        state.kv.set("top3", [4])  # each part is valid; the merged list is too long
    assert state.kv.get("top3") == [1, 2, 3]


def test_reads_cannot_corrupt_the_store() -> None:
    state = State({"files": {"a.py": {"lines": [1]}}, "tags": ["x"]})
    got = state.kv.get("files")
    got["a.py"]["lines"].append(2)
    got["b.py"] = {}
    snapshot = state.data
    snapshot["tags"].append("y")
    snapshot["new"] = 1
    tags = state.kv.get("tags")
    tags.append("z")
    assert state.data == {"files": {"a.py": {"lines": [1]}}, "tags": ["x"]}


def test_writes_do_not_keep_a_handle_on_the_callers_object() -> None:
    value = {"nested": [1]}
    state = State()
    state.kv.set("k", value)
    value["nested"].append(2)
    assert state.kv.get("k") == {"nested": [1]}


def test_initial_state_is_validated_without_handlers_and_closed_schemas_refuse_extras() -> None:
    schema = {"items": {"type": list[int]}, "n": {"type": int}}
    state = State({"items": ["1", "2"], "n": "3"}, schema=schema)
    assert state.data == {"items": [1, 2], "n": 3}  # coerced, not appended to anything
    with pytest.raises(StateValidationError, match="'n'"):
        State({"n": "x"}, schema=schema)
    with pytest.raises(StateError, match="'stray'"):
        State({"stray": 1}, schema=StateSchema(schema, closed=True))


@pytest.mark.anyio
async def test_network_run_seeds_through_the_schema() -> None:
    from agents import Agent, ScriptedModel
    from network import Network

    agent = Agent("a", model=ScriptedModel(["ok"]))
    network = Network(
        "n", agents=[agent], state_schema=StateSchema({"n": {"type": int}}, closed=True)
    )
    result = await network.run("x", state={"n": "4"})
    assert result["n"] == 4
    with pytest.raises(StateError, match="'extra'"):
        await network.run("x", state={"extra": 1})


def test_scopes_are_all_visible_and_temp_is_never_serialized() -> None:
    state = State()
    for key in ("plain", "user:name", "app:motd", "temp:scratch"):
        state.kv.set(key, key.upper())
    assert set(state.data) == {"plain", "user:name", "app:motd", "temp:scratch"}
    assert state.kv.get("temp:scratch") == "TEMP:SCRATCH"
    assert "temp:scratch" not in state.snapshot()
    assert "temp:scratch" not in state.to_json()
    assert all("temp:" not in op["path"] for op in state.kv.take_ops())


@pytest.mark.parametrize(
    ("schema", "key", "handler"),
    [
        ({"docs": {"type": list[dict]}}, "docs", None),
        ({"docs": {"type": list}}, "docs", None),
        ({"docs": {"type": dict[str, Any], "handler": merge_dicts}}, "docs", None),
        ({}, "docs", merge_lists),
        ({}, "docs", merge_dicts),
    ],
)
def test_appends_and_merges_keep_no_handle_on_the_callers_objects(
    schema: dict, key: str, handler: Any
) -> None:
    state = State(schema=schema)
    nested = {"lines": [1]}
    first = {"a": nested} if "dict" in str(schema) or handler is merge_dicts else [nested]
    for _ in range(2):  # the first write creates the key, the second appends or merges
        state.kv.set(key, first, handler=handler)
    before = state.data
    ops = state.kv.take_ops()
    nested["lines"].append(99)
    assert state.data == before
    assert "99" not in str(ops)


def test_a_tool_result_written_to_state_is_not_shared_with_the_tool() -> None:
    import anyio

    from agents import Agent, ScriptedModel, call, tool
    from network import Network

    kept = {}

    @tool(outputs_to_state={"docs": {"source": "docs"}})
    def fetch() -> dict[str, Any]:
        kept["docs"] = [{"title": "a"}]
        return {"docs": kept["docs"]}

    agent = Agent("a", tools=[fetch], model=ScriptedModel([call("fetch")]))
    network = Network("n", agents=[agent], state_schema={"docs": {"type": list[dict]}})
    result = anyio.run(network.run, "x")
    kept["docs"].append({"title": "sneaked in"})
    kept["docs"][0]["title"] = "changed"
    assert result["docs"] == [{"title": "a"}]


def test_seeds_are_validated_but_never_merged() -> None:
    calls = []

    def spy(current: Any, new: Any) -> Any:
        calls.append(new)
        return new

    state = State(
        {"best": 3, "items": [1, 2]},
        schema={"best": {"type": int, "handler": spy}, "items": {"type": list[int]}},
    )
    assert calls == []
    assert state.data == {"best": 3, "items": [1, 2]}
    with pytest.raises(StateValidationError, match="'items'"):
        State({"items": 5}, schema={"items": {"type": list[int]}})  # merge_lists would wrap it


def test_model_typed_lists_and_dicts_record_json_ops_without_warnings() -> None:
    import warnings

    class Doc(BaseModel):
        title: str

    state = State(
        schema={
            "docs": {"type": list[Doc]},
            "index": {"type": dict[str, Doc], "handler": merge_dicts},
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for title in ("a", "b"):
            state.kv.set("docs", {"title": title})
            state.kv.set("index", {title: {"title": title}})
    assert state.kv.take_ops()[-2:] == [
        {"op": "add", "path": "/docs/-", "value": {"title": "b"}},
        {"op": "add", "path": "/index/b", "value": {"title": "b"}},
    ]
    assert state.snapshot()["docs"] == [{"title": "a"}, {"title": "b"}]


@pytest.mark.anyio
async def test_pydantic_defaults_are_fresh_for_every_run() -> None:
    from agents import Agent, ScriptedModel, ToolContext, call, tool
    from network import Network

    class Notes(BaseModel):
        notes: list[str] = []
        meta: dict[str, str] = {}

    @tool
    def note(ctx: ToolContext) -> str:
        ctx.kv.set("notes", "hello")
        return "ok"

    agent = Agent("a", tools=[note], model=ScriptedModel([call("note")], repeat_last=True))
    network = Network("n", agents=[agent], state_schema=Notes)
    first = await network.run("x")
    second = await network.run("x")
    assert first["notes"] == second["notes"] == ["hello"]
    assert network.schema.defaults == {"notes": [], "meta": {}}


def test_an_unknown_entry_field_names_the_fields_there_are_and_where_defaults_go() -> None:
    with pytest.raises(ConfigurationError) as caught:
        StateSchema({"count": {"type": int, "default": 0}})
    message = str(caught.value)
    assert "state key 'count': unknown schema fields ['default']" in message
    assert "'type', 'handler', 'conflict'" in message
    assert "state={key: value}" in message and "field default" in message
    with pytest.raises(ConfigurationError) as caught:
        StateSchema({"count": {"type": int, "handlr": None}})
    assert "'type', 'handler', 'conflict'" in str(caught.value)
    assert "state={key: value}" not in str(caught.value)


class ConversationInSchema(BaseModel):
    messages: list[str] = []


@pytest.mark.parametrize(
    "schema",
    [
        {"messages": {"type": list}},  # as a Haystack schema may spell it
        {"last_message": {"type": str}},
        ConversationInSchema,
    ],
)
def test_the_conversation_names_are_refused_as_declared_keys(schema: Any) -> None:
    # The conversation is `state.messages` (`result["messages"]`), never a key: a declared
    # key of that name would be hidden behind it.
    with pytest.raises(ConfigurationError, match=r"'(last_)?messages?'.*state\.messages"):
        State(schema=schema)


@pytest.mark.parametrize("key", ["a\x00b", "name\ud800"], ids=["NUL", "lone surrogate"])
def test_a_declared_key_no_thread_store_can_keep_is_refused_as_an_undeclared_one_is(
    key: str,
) -> None:
    # an undeclared key of that form was refused when written; declared, it was taken, and a
    # thread's commit refused the run at its end
    with pytest.raises(ConfigurationError, match="NUL or a lone surrogate"):
        State(schema={key: {"type": int}})
    agent = Agent("a", output_key=key, model=ScriptedModel(["paid for"]))
    with pytest.raises(ConfigurationError, match="agent 'a': output_key: .*NUL or a lone"):
        Network("n", agents=[agent])  # not at the write, after the model was paid


@pytest.mark.parametrize("output_type", [None, int])
def test_an_output_key_may_not_be_named_for_the_conversation(output_type: Any) -> None:
    from agents import Agent, ScriptedModel
    from network import Network

    agent = Agent("a", model=ScriptedModel(["hi"]), output_key="messages", output_type=output_type)
    with pytest.raises(ConfigurationError, match="'a'.*'messages'"):
        Network("n", agents=[agent], router=lambda ctx: None)


def test_a_write_to_a_conversation_name_is_refused_and_changes_nothing() -> None:
    state = State({"notes": "kept"})
    with pytest.raises(StateError, match=r"'messages'.*state\.messages") as caught:
        state.kv.set("messages", ["hello"])
    assert caught.value.key == "messages"
    with pytest.raises(StateError, match="'last_message'"):
        State({"last_message": "hi"})
    assert state.kv.data == {"notes": "kept"}


def test_none_is_checked_like_any_value_so_a_str_key_refuses_it() -> None:
    # Haystack's `set` never type-checks, so None lands in a `str` key there.
    state = State({"name": "first"}, schema={"name": {"type": str}, "nick": {"type": str | None}})
    with pytest.raises(StateValidationError, match="'name'"):
        state.kv.set("name", None)
    state.kv.set("nick", None)
    assert state.kv.data == {"name": "first", "nick": None}


def test_a_handler_in_annotated_metadata_that_takes_one_argument_is_refused() -> None:
    class Shape(BaseModel):
        docs: Annotated[list[str], lambda current: current] = []

    with pytest.raises(ConfigurationError, match="'docs'.*handler\\(current, new\\)"):
        State(schema=Shape)
