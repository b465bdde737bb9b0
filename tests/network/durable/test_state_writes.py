"""The writes a recorded step made to the run's store: the keys its write log names, not a
comparison of two copies of the whole state."""

from __future__ import annotations

from network.durable.state_writes import DELETED, apply_writes, writes_mark, writes_since
from network.state.kv import KV
from network.state.schema import StateSchema

SCHEMA = StateSchema({"notes": {"type": list[str]}})


def test_a_steps_writes_are_the_keys_it_wrote_with_their_values_after_it() -> None:
    kv = KV(SCHEMA)
    kv.seed({"untouched": [1, 2, 3], "kept": 1, "gone": "x"})
    kv.set("before", 0)
    mark = writes_mark(kv)
    kv.set("kept", 1)  # the same value again: still a write
    kv.set("added", {"a": 1})
    kv.set("added", {"b": 2})  # the value after the step is what counts
    kv.delete("gone")
    kv.set("brief", 5)
    kv.delete("brief")
    assert writes_since(kv, mark) == [
        ("kept", 1),
        ("added", {"b": 2}),
        ("gone", DELETED),
        ("brief", DELETED),
    ]


def test_replaying_the_writes_rebuilds_the_store_the_step_left() -> None:
    live, replayed = KV(SCHEMA), KV(SCHEMA)
    for kv in (live, replayed):
        kv.seed({"notes": ["a"], "gone": 1})
    mark = writes_mark(live)
    live.set("notes", ["b"])  # appended
    live.delete("gone")
    apply_writes(replayed, writes_since(live, mark))
    assert replayed.data == live.data == {"notes": ["a", "b"]}
