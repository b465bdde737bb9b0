"""The state writes a step made, recorded with it and re-applied when the step is replayed.

A replayed router decision or tool call does not run again, so what it wrote is written
again from the record, validated by the schema like any other write, so that the resumed
state is the one the run had. Two forms, after the store the step wrote to:

- the run's own store: each key's value after the step, written back with `replace_values`
  (the store then holds exactly what it held);
- a parallel branch's store (`BranchKV`) or a tool's staged view (`StagedKV`, concurrent tool
  calls of one answer): these keep each write as it was made, to be merged later (at the
  join, or at the view's commit) through the key's handler. Replaying the value after with
  `replace_values` would merge differently (a list append would become a replace, and two
  branches appending to one list a conflict), so the writes are recorded as they were made,
  `(key, value, handler)`, and made again the same way.

Which keys a step wrote to the run's own store comes from the store's write log
(`KV.write_count` before the step, `KV.writes_since` after it): the cost is that of the keys
written, not of the whole state, which a snapshot-and-compare would copy twice per step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from network.sentinels import DELETED
from network.state.branch import BranchKV
from network.state.handlers import replace_values
from network.state.kv import KV
from network.state.schema import Handler
from network.state.staged import StagedKV

StateWrites = list[tuple[str, Any]]
"""`[(key, value_after)]`; a deleted key's value is `DELETED`."""

# A removal's value is `network.sentinels.DELETED`; it was defined here once, so records pickled
# then name it here: this module keeps the name.


@dataclass(frozen=True, slots=True)
class RawWrites:
    """A step's writes as it made them: `(key, value, handler)`, a removal's value `DELETED`."""

    writes: tuple[tuple[str, Any, Handler | None], ...]


def writes_mark(kv: Any) -> Any:
    """Where the store stands before a step (for `writes_since`)."""
    if isinstance(kv, BranchKV):
        return len(kv.writes)
    if isinstance(kv, StagedKV):
        return len(kv.staged_writes())
    if isinstance(kv, KV):
        return kv.write_count
    return kv.data


def writes_since(kv: Any, mark: Any) -> StateWrites | RawWrites:
    """What the step wrote to `kv` since `mark`, in the form its replay needs."""
    if isinstance(kv, BranchKV):
        writes = kv.writes[mark:]
        return RawWrites(tuple((key, value, handler) for key, value, handler, _ in writes))
    if isinstance(kv, StagedKV):
        staged = kv.staged_writes(mark)
        return RawWrites(tuple((k, DELETED if gone else v, h) for k, v, h, gone in staged))
    if isinstance(kv, KV):
        written = dict.fromkeys(record.key for record in kv.writes_since(mark))
        return [(key, kv.get(key) if kv.has(key) else DELETED) for key in written]
    return state_writes(mark, kv.data)


def state_writes(before: dict[str, Any], after: dict[str, Any]) -> StateWrites:
    """The keys whose values differ between two snapshots of a store, with their new values."""
    writes: StateWrites = [
        (key, value) for key, value in after.items() if key not in before or before[key] != value
    ]
    writes.extend((key, DELETED) for key in before if key not in after)
    return writes


def apply_writes(kv: Any, writes: StateWrites | RawWrites) -> None:
    """Write a replayed step's writes again (validated; a rejected value raises)."""
    if isinstance(writes, RawWrites):
        for key, value, handler in writes.writes:
            if value is DELETED:
                kv.delete(key)
            else:
                kv.set(key, value, handler)
        return
    for key, value in writes:
        if value is DELETED:
            kv.delete(key)
        else:
            kv.set(key, value, replace_values)
