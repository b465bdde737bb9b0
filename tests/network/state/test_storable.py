"""State holds JSON data only: a live object is refused when it is written, naming the key."""

from __future__ import annotations

import datetime
import json
import socket
import threading
import warnings
from typing import Any

import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, State, StateValidationError, merge_dicts, merge_lists
from network.errors import ToolStateWarning, UnstorableValueError


class Point(BaseModel):
    x: int
    y: int


SCHEMA: dict[str, Any] = {
    "tags": {"type": set[str]},
    "when": {"type": datetime.datetime},
    "points": {"type": list[Point]},
    "loose": {"type": dict[str, Any], "handler": merge_dicts},
    "items": {"type": list[Any]},
    "best": {"type": Any, "handler": lambda current, new: new},
}


def live_objects() -> list[tuple[str, Any]]:
    return [
        ("lock", threading.Lock()),
        ("socket", socket.socket()),
        ("function", lambda: None),
        ("object", object()),
        ("set", {1, 2}),
        ("nan", float("nan")),
        ("infinity", float("inf")),
        ("bytes", b"raw"),
        ("int dict key", {1: "one"}),
        ("nested", {"a": [1, {"client": threading.Lock()}]}),
    ]


@pytest.mark.parametrize(("label", "value"), live_objects(), ids=[n for n, _ in live_objects()])
def test_untyped_keys_refuse_what_json_cannot_hold(label: str, value: Any) -> None:
    state = State(data={"before": 1})
    with pytest.raises(UnstorableValueError) as raised:
        state.kv.set("sandbox", value)
    error = raised.value
    assert isinstance(error, StateValidationError)
    assert error.key == "sandbox"
    assert "'sandbox'" in str(error)
    assert "deps=" in str(error) and "resources=" in str(error)  # says where live objects go
    assert state.kv.data == {"before": 1}  # nothing changed
    if isinstance(value, socket.socket):
        value.close()


def test_the_message_points_at_the_offending_part() -> None:
    state = State()
    with pytest.raises(UnstorableValueError, match=r"_thread.lock at \['a'\]\[1\]\['client'\]"):
        state.kv.set("k", {"a": [1, {"client": threading.Lock()}]})


def test_plain_json_and_models_are_stored() -> None:
    state = State()
    value = {"a": [1, 2.5, None, True, "s", (1, 2)], "p": Point(x=1, y=2)}
    state.kv.set("k", value)
    assert state.kv.get("k")["a"][1] == 2.5


def test_declared_types_store_what_they_declare_and_refuse_live_parts() -> None:
    state = State(schema=SCHEMA)
    kv = state.kv
    kv.set("tags", {"a", "b"})  # a set where the key says set[str]
    kv.set("when", datetime.datetime(2026, 1, 1))
    kv.set("points", [Point(x=1, y=2)])
    kv.set("loose", {"a": {"b": 1}})
    kv.set("items", "x")
    assert kv.get("tags") == {"a", "b"}
    for key, value in [
        ("loose", {"client": threading.Lock()}),  # the Any part of dict[str, Any]
        ("items", threading.Lock()),  # an appended item of list[Any]
        ("best", threading.Lock()),  # through a custom handler
    ]:
        with pytest.raises(UnstorableValueError) as raised:
            kv.set(key, value)
        assert raised.value.key == key
    assert kv.get("loose") == {"a": {"b": 1}} and kv.get("items") == ["x"]
    assert not kv.has("best")


ANY_PARTS: dict[str, Any] = {
    "list": {"type": list},
    "dict": {"type": dict, "handler": merge_dicts},
    "list_any": {"type": list[Any]},
    "dict_any": {"type": dict[str, Any], "handler": merge_dicts},
    "maybe_list": {"type": list | None},
}


@pytest.mark.parametrize("key", list(ANY_PARTS))
@pytest.mark.parametrize(
    ("label", "part"),
    [("set", {1, 2}), ("bytes", b"\xff\x00"), ("int dict key", {1: "one"})],
    ids=["set", "bytes", "int dict key"],
)
def test_the_any_part_of_a_declared_container_refuses_what_an_untyped_key_refuses(
    key: str, label: str, part: Any
) -> None:
    # A bare `list` or `dict` is stored as it is and is its own JSON form: a set, bytes or an
    # int dict key in it was stored, then broke `to_json`, the stream and the thread's commit
    # at the end of the run (or read back changed after a reload: a list, text, "1").
    state = State(schema=ANY_PARTS)
    value = {"x": part} if key in ("dict", "dict_any") else [part]
    with pytest.raises(UnstorableValueError) as raised:
        state.kv.set(key, value)
    assert raised.value.key == key
    assert state.kv.data == {}
    assert state.kv.take_ops() == []
    json.loads(state.to_json())  # the JSON form is still whole


def test_the_any_part_of_a_declared_container_stores_plain_json() -> None:
    state = State(schema=ANY_PARTS)
    state.kv.set("list", [1, "a", {"b": [None, 2.5]}])
    state.kv.set("dict", {"x": {"y": [1]}})
    state.kv.set("maybe_list", [(1, 2)])  # a tuple, as JSON makes of it: a list
    assert State.from_json(state.to_json()).kv.data == {
        "list": [1, "a", {"b": [None, 2.5]}],
        "dict": {"x": {"y": [1]}},
        "maybe_list": [[1, 2]],
    }


def test_initial_data_and_staged_tool_views_refuse_too() -> None:
    with pytest.raises(UnstorableValueError, match="'client'"):
        State(data={"client": threading.Lock()})
    view = State().for_tool()
    with pytest.raises(UnstorableValueError, match="'client'"):
        view.kv.set("client", threading.Lock())


def test_typed_keys_whose_type_is_json_safe_carry_no_check() -> None:
    state = State(
        schema={"n": {"type": int}, "points": {"type": list[Point]}, "free": {"type": Any}}
    )
    assert state.kv.spec("n").check is None
    assert state.kv.spec("points").check is None
    assert state.kv.spec("free").check is not None
    assert state.kv.spec("undeclared").check is not None


@pytest.mark.anyio
@pytest.mark.parametrize("parallel", [False, True], ids=["one call", "parallel calls"])
async def test_a_tool_writing_a_live_object_is_rolled_back_the_model_told_the_developer_warned(
    parallel: bool,
) -> None:
    @tool
    def connect(ctx: ToolContext) -> str:
        """Open a sandbox."""
        ctx.kv.set("progress", "connecting")  # a good write first: rolled back with the bad one
        ctx.kv.set("sandbox", threading.Lock())
        return "connected"

    @tool
    def note(ctx: ToolContext) -> str:
        """Take a note."""
        ctx.kv.set("note", "kept")
        return "noted"

    calls = [call("connect"), call("note")] if parallel else [call("connect")]
    model = ScriptedModel([calls, "done"])
    agent = Agent("builder", tools=[connect, note], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await network.run("go")
    record = result.results[0].tool_calls[0]
    assert record.is_error and "UnstorableValueError" in record.content
    assert "'sandbox'" in record.content
    told = [m for m in model.requests[1].history if m.role == "tool"]
    assert told[0].is_error and "'sandbox'" in str(told[0].content)
    assert not result.state.kv.has("sandbox") and not result.state.kv.has("progress")
    assert result.state.kv.has("note") is parallel  # the other call's writes are kept
    assert result.output == "done"  # the run went on
    assert result.tool_errors == [record]  # the developer sees it in the result as well
    raised = [w for w in caught if issubclass(w.category, ToolStateWarning)]
    assert len(raised) == 1
    text = str(raised[0].message)
    assert "'builder'" in text and "'connect'" in text and "'sandbox'" in text


@pytest.mark.anyio
async def test_outputs_to_state_of_a_live_object_is_refused_the_same_way() -> None:
    @tool(outputs_to_state={"client": {"source": "client"}})
    def open_client() -> dict[str, Any]:
        """Open a client."""
        return {"client": threading.Lock()}

    model = ScriptedModel([call("open_client"), "ok"])
    agent = Agent("a", tools=[open_client], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    with pytest.warns(ToolStateWarning, match="'client'"):
        result = await network.run("go")
    assert result.results[0].tool_calls[0].is_error
    assert not result.state.kv.has("client")


class Reading(BaseModel):
    celsius: float


class FiniteReading(BaseModel):
    model_config = {"allow_inf_nan": False}
    celsius: float


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize(
    ("tp", "wrap"),
    [
        (float, lambda x: x),
        (float | None, lambda x: x),
        (list[float], lambda x: [1.5, x]),
        (dict[str, float], lambda x: {"ok": 1.5, "bad": x}),
        (Reading, lambda x: Reading(celsius=x)),
        (list[Reading], lambda x: [Reading(celsius=1.5), Reading(celsius=x)]),
        (FiniteReading, lambda x: {"celsius": x}),
    ],
)
def test_typed_keys_refuse_nan_and_infinity_leaving_the_state_as_it_was(
    tp: Any, wrap: Any, bad: float
) -> None:
    # JSON has no NaN or infinity: a client's JSON.parse and PostgreSQL's jsonb refuse them,
    # and the state's JSON form (`to_json`, deltas) would not be JSON.
    state = State(schema={"reading": {"type": tp}, "other": {"type": int}})
    state.kv.set("other", 1)
    state.kv.take_ops()
    with pytest.raises(StateValidationError) as caught:
        state.kv.set("reading", wrap(bad))
    assert caught.value.key == "reading"
    assert not state.kv.has("reading")
    assert state.kv.take_ops() == []
    assert state.kv.data == {"other": 1}
    with pytest.raises(StateValidationError):
        State({"reading": wrap(bad)}, schema={"reading": {"type": tp}})
    state.kv.set("reading", wrap(2.5))  # a finite value is stored
    assert "NaN" not in state.to_json() and "Infinity" not in state.to_json()


def test_appending_nan_to_a_typed_list_keeps_the_list() -> None:
    state = State(schema={"temps": {"type": list[float]}})
    state.kv.set("temps", [1.0])
    with pytest.raises(StateValidationError) as caught:
        state.kv.set("temps", [2.0, float("nan")])
    assert caught.value.key == "temps"
    assert state.kv.get("temps") == [1.0]


class Counted(BaseModel):
    n: int


@pytest.mark.parametrize(
    "value",
    [
        10**400,
        -(2**1024),
        10**5000,  # more digits than Python writes as JSON text
        [1, 10**400],
        {"a": {"b": 10**400}},
        (1, 10**400),
        Counted(n=10**400),
    ],
    ids=["big", "negative", "huge", "in a list", "nested", "in a tuple", "in a model"],
)
def test_untyped_keys_refuse_numbers_json_readers_cannot_hold(value: Any) -> None:
    # A double's range is how a JSON reader (a client's JSON.parse) holds a number; past
    # 4300 digits Python cannot write it as JSON at all, and the run failed at its first
    # snapshot or commit, far from the write.
    state = State({"before": [1]})
    with pytest.raises(UnstorableValueError) as caught:
        state.kv.set("count", value)
    assert caught.value.key == "count"
    assert "too large" in str(caught.value) and "string" in str(caught.value)
    with pytest.raises(UnstorableValueError):
        state.kv.set("before", [2, 10**400], handler=merge_lists)  # an append
    assert state.kv.data == {"before": [1]}
    state.kv.set("count", 2**1024 - 1)  # the largest that fits
    state.kv.set("count", str(10**400))  # as text
    assert state.to_json()


class Tally(BaseModel):
    n: int


@pytest.mark.parametrize(
    ("tp", "value"),
    [
        (int, 10**400),
        (int | None, -(10**5000)),
        (list[int], [1, 10**400]),
        (dict[str, int], {"a": 10**400}),
        (dict[int, str], {10**400: "a"}),
        (Tally, {"n": 10**400}),
        (list[Tally], [{"n": 1}, Tally(n=10**400)]),
        (list[int | str], ["a", 10**400]),
    ],
    ids=[
        "int",
        "optional",
        "list",
        "dict value",
        "dict key",
        "model",
        "list of models",
        "mixed list",
    ],
)
def test_typed_keys_refuse_numbers_json_readers_cannot_hold(tp: Any, value: Any) -> None:
    state = State({"count": None}, schema={"count": {"type": tp | None}})
    with pytest.raises(StateValidationError) as caught:
        state.kv.set("count", value)
    assert caught.value.key == "count"
    assert "too large" in str(caught.value)
    assert "Value error" not in str(caught.value)  # said as ours, not as pydantic's wrapper
    assert state.kv.get("count") is None
    with pytest.raises(StateValidationError):
        State({"count": value}, schema={"count": {"type": tp}})
