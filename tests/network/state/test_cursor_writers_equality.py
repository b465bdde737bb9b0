"""The store's change cursor, named writers, and State equality with any handler."""

from __future__ import annotations

from typing import Any

from network import State
from network.history.view import HistoryView
from network.state.kv import KV
from network.state.provenance import CALLER, Writer, agent_writer, router_writer, tool_writer


def test_the_store_hands_out_unpublished_ops_once_and_keeps_them_for_take_ops() -> None:
    kv = KV()
    kv.set("a", 1)
    first = kv.unpublished_ops()
    assert first == [{"op": "add", "path": "/a", "value": 1}]
    assert kv.unpublished_ops() == []  # shown already
    kv.set("b", 2)
    assert kv.unpublished_ops() == [{"op": "add", "path": "/b", "value": 2}]
    assert len(kv.take_ops()) == 2  # showing a change does not take it off the result
    kv.set("c", 3)
    assert kv.unpublished_ops() == [{"op": "add", "path": "/c", "value": 3}]


def test_writers_are_named_and_recorded_as_such() -> None:
    kv = KV()
    kv.set("x", 0)
    kv.writer = router_writer(0)
    kv.set("x", 1)
    kv.writer = agent_writer("planner", 0)
    kv.set("x", 2)
    kv.writer = tool_writer("planner", 0, "plan", "call_1")
    kv.set("x", 3)
    writers = [record.writer for record in kv.history_of("x")]
    assert writers == [
        CALLER,
        Writer(call_index=0, source="router"),
        Writer("planner", 0, source="agent"),
        Writer("planner", 0, "plan", "call_1", "tool"),
    ]
    assert all(isinstance(writer, Writer) for writer in writers)
    assert writers[3].tool == "plan" and writers[3].tool_call_id == "call_1"


def test_states_with_a_lambda_handler_compare_instead_of_raising() -> None:
    def keep_longest(old: Any, new: Any) -> Any:
        return new if old is None or len(new) > len(old) else old

    longest = lambda old, new: max(old or "", new, key=len)  # noqa: E731 (the point)
    schema = {"name": {"type": str, "handler": longest}}
    first, second = State({"name": "ab"}, schema=schema), State({"name": "ab"}, schema=schema)
    assert first == second
    other = State({"name": "ab"}, schema={"name": {"type": str, "handler": keep_longest}})
    assert first != other
    assert first != State({"name": "ab"}, schema={"name": {"type": int | str, "handler": longest}})


def test_the_conversation_is_public_and_read_only() -> None:
    state = State(messages=[{"role": "user", "content": "hi"}])
    frozen = state.history()
    state.append_messages([{"role": "assistant", "content": "hello"}])
    live = state.messages
    assert isinstance(frozen, HistoryView) and len(frozen) == 1 and len(live) == 2
    assert frozen.is_view_of(live) and live.prefix(1) == frozen[:]
    assert not hasattr(live, "append")
