"""A step's recorded state writes, made again on replay, leave the store as the step left it,
whatever the values: a value that is a string equal to the deletion marker's old text (a
model can write any text through a tool) is written, never taken for a deletion."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from network.durable.state_writes import apply_writes, writes_mark, writes_since
from network.state.branch import BranchKV
from network.state.state import State

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
