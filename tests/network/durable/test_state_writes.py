"""The writes a recorded step made to the run's store: the keys its write log names, not a
comparison of two copies of the whole state; replayed, they leave the store as the step left it,
whatever the values."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from network.durable.state_writes import DELETED, apply_writes, writes_mark, writes_since
from network.state.branch import BranchKV
from network.state.kv import KV
from network.state.schema import StateSchema
from network.state.state import State

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


# A value that is a string equal to the deletion marker's old text (a model can write any
# text through a tool) is written again on replay, never taken for a deletion.
MARKER_TEXT = "__agent_network_deleted__"


def replayed(before: dict[str, Any], step: Any, *, branch: bool = False) -> tuple[Any, Any]:
    """The store after `step` ran live, and a copy of `before` after its record was replayed
    (pickled, as DBOS stores step outputs)."""
    live, again = State(dict(before)).kv, State(dict(before)).kv
    if branch:
        live, again = BranchKV(live), BranchKV(again)
    mark = writes_mark(live)
    step(live)
    apply_writes(again, pickle.loads(pickle.dumps(writes_since(live, mark))))
    return live, again


@pytest.mark.parametrize("branch", [False, True], ids=["run", "branch"])
def test_a_value_equal_to_the_old_marker_text_is_written_again(branch: bool) -> None:
    live, again = replayed({"note": "old"}, lambda kv: kv.set("note", MARKER_TEXT), branch=branch)
    assert live.get("note") == MARKER_TEXT
    assert again.get("note") == MARKER_TEXT


@pytest.mark.parametrize("branch", [False, True], ids=["run", "branch"])
def test_a_deleted_key_is_deleted_again(branch: bool) -> None:
    live, again = replayed({"note": "old"}, lambda kv: kv.delete("note"), branch=branch)
    assert live.get("note", "gone") == again.get("note", "gone") == "gone"
