"""A merge handler's own exception: as it is where the caller's code writes, a tool's failure
(an error result the model sees, the tool's writes undone) where a tool writes, as
docs/errors.md says."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, RunContext, State, StateError, StateValidationError, merge_dicts


class MergeRefused(Exception):
    """The handler's own exception type."""


def refuse_odd(old: Any, new: Any) -> Any:
    if new % 2:
        raise MergeRefused(f"{new} is odd")
    return new


SCHEMA = {"even": {"type": int, "handler": refuse_odd}, "note": {"type": str}}


def test_a_handler_s_exception_in_a_router_passes_through_as_it_is() -> None:
    solo = Agent("solo", model=ScriptedModel(["hi"]))

    def route(ctx: RunContext) -> Any:
        ctx.kv.set("even", 3)
        return solo

    network = Network("n", agents=[solo], router=route, state_schema=SCHEMA)
    with pytest.raises(MergeRefused, match="3 is odd") as raised:
        network.run_sync("go", state={"even": 2})
    assert raised.value.partial_result["even"] == 2  # type: ignore[attr-defined]


def test_a_handler_s_exception_in_a_tool_is_an_error_result_the_model_sees() -> None:
    @tool
    def write(value: int, ctx: ToolContext) -> str:
        """Write both keys."""
        ctx.kv.set("note", "written")
        ctx.kv.set("even", value)
        return "ok"

    worker = Agent("worker", tools=[write], model=ScriptedModel([call("write", value=5), "done"]))
    result = Network("n", agents=[worker], state_schema=SCHEMA).run_sync("go", state={"even": 2})
    record = result.state.results[0].tool_calls[0]
    assert record.is_error
    assert "MergeRefused" in record.content and "5 is odd" in record.content
    assert result["even"] == 2
    assert "note" not in result.state.kv.keys()  # the tool's other write was rolled back too


def test_merge_dicts_refuses_what_is_no_mapping_naming_the_key() -> None:
    # it was merge_dicts' bare TypeError, which named no key (in a tool: staged, the same)
    schema = {"files": {"type": dict[str, str], "handler": merge_dicts}}
    state = State({"files": {"a.py": "x"}}, schema=schema)
    for value in (["b.py"], "b.py", None):
        with pytest.raises(StateValidationError, match="state key 'files' merges dicts") as refused:
            state.kv.set("files", value)
        assert refused.value.key == "files"
    with pytest.raises(StateValidationError, match="state key 'loose' merges dicts"):
        state.kv.set("loose", 5, handler=merge_dicts)
    assert state.kv.data == {"files": {"a.py": "x"}}

    @tool
    def save(files: Any, ctx: ToolContext) -> str:
        """Save files."""
        ctx.kv.set("files", files)
        return "saved"

    worker = Agent("w", tools=[save], model=ScriptedModel([call("save", files=["c.py"]), "done"]))
    result = Network("n", agents=[worker], state_schema=schema).run_sync("go")
    record = result.state.results[0].tool_calls[0]
    assert record.is_error and "state key 'files' merges dicts" in record.content


def test_merge_dicts_into_a_key_that_holds_no_mapping_is_refused_naming_the_key() -> None:
    # a mapping merged into a list (or a number) was merge_dicts' bare TypeError: no key
    state = State({"docs": ["a"], "count": 1}, schema={"docs": {"type": list[str]}})
    for key in ("docs", "count"):
        with pytest.raises(StateError, match=f"state key '{key}' holds a") as refused:
            state.kv.set(key, {"b": "c"}, handler=merge_dicts)
        assert refused.value.key == key
    assert state.kv.data == {"docs": ["a"], "count": 1}
    assert state.kv.take_ops() == []


def test_merge_lists_appends_a_lists_or_tuples_items_and_anything_else_whole() -> None:
    from network import merge_lists

    assert merge_lists([1, 2, 3], [4, 5]) == [1, 2, 3, 4, 5]
    assert merge_lists([1, 2, 3], 4) == [1, 2, 3, 4]
    assert merge_lists(1, 2) == [1, 2] and merge_lists(None, [2, 3]) == [2, 3]
    # Haystack appends a tuple as one item; here its items are appended (as a tool's batch
    # is), so a pair goes into a `list[tuple[...]]` key inside a list
    assert merge_lists([1], (2, 3)) == [1, 2, 3]
    state = State(schema={"pairs": {"type": list[tuple[str, int]]}})
    state.kv.set("pairs", [("a", 1)])
    with pytest.raises(StateValidationError, match="'pairs'"):
        state.kv.set("pairs", ("b", 2))
    assert state.kv.data == {"pairs": [("a", 1)]}


@pytest.mark.parametrize("handler", [3, "merge_lists", 0, ""])
def test_a_per_write_handler_that_is_not_callable_is_refused_naming_the_key(
    handler: Any,
) -> None:
    """Haystack's `set(k, v, handler_override=fn)` is `kv.set(k, v, handler=fn)`: a handler
    that cannot be called was a bare TypeError naming no key (a falsy one was ignored); now a
    `StateError` naming the key, before anything changes, in a router and in a tool alike."""
    schema = {"docs": {"type": list[str]}}
    state = State({"docs": ["a"]}, schema=schema)
    with pytest.raises(
        StateError, match=r"state key 'docs': handler .* is not callable"
    ) as refused:
        state.kv.set("docs", ["b"], handler=handler)
    assert refused.value.key == "docs"
    assert state.kv.data == {"docs": ["a"]}

    @tool
    def add(ctx: ToolContext) -> str:
        """Add a doc."""
        ctx.kv.set("note", "written")
        ctx.kv.set("docs", ["b"], handler=handler)
        return "ok"

    worker = Agent("w", tools=[add], model=ScriptedModel([call("add"), "done"]))
    result = Network("n", agents=[worker], state_schema=schema).run_sync(
        "go", state={"docs": ["a"]}
    )
    record = result.state.results[0].tool_calls[0]
    assert record.is_error and "state key 'docs': handler" in record.content
    assert result.state.kv.data == {"docs": ["a"]}  # the tool's other write undone too
