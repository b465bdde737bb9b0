"""The state writes a step made, recorded with it and re-applied when the step is replayed.

A replayed router decision or tool call does not run again, so what it wrote is written
again from the record: each key's value after the step, through `replace_values`, so the
write is validated by the schema like any other and the resumed state is the one the run had.
"""

from __future__ import annotations

from typing import Any

from network.state.handlers import replace_values

StateWrites = list[tuple[str, Any]]
"""`[(key, value_after)]`; a deleted key's value is `DELETED`."""

DELETED = "__agent_network_deleted__"


def state_writes(before: dict[str, Any], after: dict[str, Any]) -> StateWrites:
    """The keys whose values differ between two snapshots of a store, with their new values."""
    writes: StateWrites = [
        (key, value) for key, value in after.items() if key not in before or before[key] != value
    ]
    writes.extend((key, DELETED) for key in before if key not in after)
    return writes


def apply_writes(kv: Any, writes: StateWrites) -> None:
    """Write a replayed step's writes again (validated; a rejected value raises)."""
    for key, value in writes:
        if value == DELETED:
            kv.delete(key)
        else:
            kv.set(key, value, replace_values)
