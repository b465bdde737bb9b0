"""Who wrote a state key: named writers (router, agent, tool, caller), recorded with each write."""

from __future__ import annotations

from network.state.kv import KV
from network.state.provenance import CALLER, Writer, agent_writer, router_writer, tool_writer


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
