"""Every write recorded as RFC 6902 operations, per step, with provenance."""

from typing import Any

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from network import State, merge_dicts, merge_lists, replace_values


def test_ops_are_fine_grained_and_escaped() -> None:
    state = State(schema={"items": {"type": list[int]}, "files": {"type": dict[str, str]}})
    kv = state.kv
    kv.set("items", [1])
    kv.set("items", [2, 3])
    kv.set("files", {"a/b.py": "x"})
    kv.set("files", {"c~d": "y"}, handler=merge_dicts)
    kv.set("odd/key~", True)
    kv.delete("items")
    assert kv.take_ops() == [
        {"op": "add", "path": "/items", "value": [1]},
        {"op": "add", "path": "/items/-", "value": 2},
        {"op": "add", "path": "/items/-", "value": 3},
        {"op": "add", "path": "/files", "value": {"a/b.py": "x"}},
        {"op": "add", "path": "/files/c~0d", "value": "y"},
        {"op": "add", "path": "/odd~1key~0", "value": True},
        {"op": "remove", "path": "/items"},
    ]
    assert kv.take_ops() == []


def test_op_values_do_not_change_when_the_store_does() -> None:
    state = State(schema={"items": {"type": list[int]}})
    state.kv.set("items", [1])
    first = state.kv.take_ops()
    state.kv.set("items", [2])
    assert first == [{"op": "add", "path": "/items", "value": [1]}]


def test_pydantic_values_are_recorded_in_json_form() -> None:
    from datetime import date

    from pydantic import BaseModel

    class Doc(BaseModel):
        title: str
        when: date

    state = State(schema={"doc": {"type": Doc}})
    state.kv.set("doc", {"title": "t", "when": "2026-01-02"})
    assert isinstance(state.kv.get("doc"), Doc)
    assert state.kv.take_ops() == [
        {"op": "add", "path": "/doc", "value": {"title": "t", "when": "2026-01-02"}}
    ]
    assert state.snapshot() == {"doc": {"title": "t", "when": "2026-01-02"}}


@pytest.mark.anyio
async def test_each_result_carries_its_steps_delta_and_history_names_the_writer() -> None:
    from agents import Agent, ScriptedModel, ToolContext, call, tool

    @tool
    def add_doc(title: str, ctx: ToolContext) -> str:
        ctx.kv.set("docs", [title])
        return "ok"

    researcher = Agent(
        "researcher", tools=[add_doc], model=ScriptedModel([call("add_doc", title="a")])
    )
    writer = Agent("writer", model=ScriptedModel(["summary"]), output_key="summary")

    def router(ctx):
        if ctx.call_count == 1:
            ctx.kv.set("phase", "writing")  # a router write lands in the next call's delta
        return [researcher, writer][ctx.call_count] if ctx.call_count < 2 else None

    from network import Network

    result = await Network(
        "n", agents=[researcher, writer], router=router, state_schema={"docs": {"type": list[str]}}
    ).run("x")
    first, second = result.results
    assert first.state_delta == [{"op": "add", "path": "/docs", "value": ["a"]}]
    assert second.state_delta == [
        {"op": "add", "path": "/phase", "value": "writing"},
        {"op": "add", "path": "/summary", "value": "summary"},
    ]
    (doc_write,) = result.state.history_of("docs")
    assert doc_write.writer.agent == "researcher"
    assert doc_write.writer.tool == "add_doc"
    assert doc_write.writer.tool_call_id == first.tool_calls[0].id
    assert doc_write.writer.call_index == 0
    assert doc_write.at > 0
    (phase,) = result.state.history_of("phase")
    assert phase.writer.source == "router"
    (summary,) = result.state.history_of("summary")
    assert (summary.writer.agent, summary.writer.call_index, summary.writer.tool) == (
        "writer",
        1,
        None,
    )


def bump(current: Any, new: Any) -> Any:
    return (current if isinstance(current, int) else 0) + (new if isinstance(new, int) else 1)


KEYS = ["nums", "names", "files", "count", "loose", "a/b", "t~x"]
SCHEMA = {
    "nums": {"type": list[int]},
    "names": {"type": list[str]},
    "files": {"type": dict[str, str], "handler": merge_dicts},
    "count": {"type": int, "handler": bump},
}
scalars = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.booleans(), st.none())
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.dictionaries(st.text(max_size=3), scalars, max_size=3),
)
operations = st.lists(
    st.tuples(
        st.sampled_from(["set", "delete", "set_with_handler"]),
        st.sampled_from(KEYS),
        values,
        st.sampled_from([merge_lists, merge_dicts, replace_values, bump]),
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(seed=st.dictionaries(st.sampled_from(["loose", "a/b"]), values, max_size=2), ops=operations)
def test_recorded_ops_replay_to_the_final_data(seed: dict, ops: list) -> None:
    from network import AgentNetworkError

    state = State(seed, schema=SCHEMA)
    initial = state.snapshot()
    for kind, key, value, handler in ops:
        try:
            if kind == "delete":
                state.kv.delete(key)
            elif kind == "set":
                state.kv.set(key, value)
            else:
                state.kv.set(key, value, handler=handler)
        except (AgentNetworkError, TypeError):
            pass  # rejected writes must leave no trace, which the replay checks too
    patch = jsonpatch.JsonPatch(state.kv.take_ops())
    assert patch.apply(initial) == state.snapshot() == state.data
