"""The join of a fan-out: branch writes merged into the run's store in declared order.

Each branch recorded its writes as it made them (`network.state.branch.BranchKV`). They are
replayed into the run's store branch by branch, in declared order, each through its key's
handler, so the merged state is the same whatever order the branches finished in. A key
written by two branches whose handler replaces (or deleted by one of them) is a conflict:
`StateConflictError` names the key and both writers, unless the key's schema entry says how
to resolve it: `"conflict": "first"` keeps the first branch's writes, `"last"` the last
one's, a function `fn(current, new)` merges each later branch's writes into the earlier.
All or nothing: on a conflict, or a write the run's store refuses, nothing is merged.

A re-run of the failed branches of a fan-out (on a thread, `network.run.fork`) is checked
against the siblings committed before, by the same rules, in their declared places: their
writes, read from their results' `state_delta`, are in the store already and are not replayed.

A branch may make several calls (its agent's tool loop, a network branch's agents): each
write is renumbered to the place its call takes in the run's history (`Numbering`), and the
operations the replay produced are cut into one `state_delta` per call (`split_ops`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from network.errors import StateConflictError
from network.sentinels import DELETED
from network.state.branch import BranchWrite
from network.state.handlers import replace_values
from network.state.kv import KV
from network.state.provenance import Writer, WriterFields, as_writer, with_branch


@dataclass(frozen=True, slots=True)
class Numbering:
    """Where a branch's calls go in the run's history: its context numbered them from
    `local` (the fork's call count; 0 in a network branch), and its `count` results join the
    history from index `first`."""

    local: int
    first: int
    count: int

    def renumbered(self, writer: WriterFields) -> WriterFields:
        """`writer` with its call's place in the run (a write after the branch's last call,
        its router's, goes with that last call)."""
        index = writer[1]
        if index is None or self.count == 0:
            return writer
        place = self.first + min(max(index - self.local, 0), self.count - 1)
        return (writer[0], place, writer[2], writer[3], writer[4], writer[5])


def merge_branches(
    kv: KV,
    branches: Sequence[tuple[str, list[BranchWrite]]],
    committed: Collection[str] = (),
    numbering: Mapping[str, Numbering] | None = None,
) -> dict[int, int]:
    """Merge each `(branch id, writes)` into `kv`, in the order given.

    `committed`: ids of branches among `branches` whose writes are in `kv` already (the
    siblings a re-run of failed branches joins, see `committed_writes`): they take part in
    the conflict check, in their declared place, and are not written again. `numbering`:
    how each branch's calls are numbered in the run (its writes' `call_index` changes to it).

    Returns, per call index (renumbered), how many state operations were pending in `kv`
    once that call's writes were in (`split_ops` cuts the operations taken afterwards into
    each call's delta).
    """
    plan = _resolve(kv, branches)
    previous = kv.writer
    mark = kv.savepoint()
    ends: dict[int, int] = {}
    try:
        for branch_id, writes in plan:
            if branch_id in committed:
                continue
            number = numbering.get(branch_id) if numbering is not None else None
            for key, value, handler, writer in writes:
                if number is not None:
                    writer = number.renumbered(writer)
                kv.writer = with_branch(writer, branch_id)
                if isinstance(handler, _ConflictMerge) and not kv.has(key):
                    handler = handler.own  # deleted by an earlier branch: nothing to merge into
                if value is DELETED:
                    kv.delete(key)
                else:
                    kv.set(key, value, handler)
                if writer[1] is not None:
                    ends[writer[1]] = kv.pending_op_count()
    except BaseException:
        kv.rollback(mark)
        raise
    finally:
        kv.writer = previous
    kv.release(mark)
    return ends


def committed_writes(agent: str, ops: Sequence[Any]) -> list[BranchWrite]:
    """A committed branch's writes as its `state_delta` tells them (RFC 6902 operations), for
    the conflict check of a re-run sibling: a whole-key `add` is a write through the key's
    handler, a `remove` a delete, an operation inside the key (`/key/-`) a merge."""
    writes: list[BranchWrite] = []
    writer = (agent, None, None, None, "agent", None)
    for op in ops:
        path = str(op.get("path", ""))
        top, _, rest = path[1:].partition("/")
        key = top.replace("~1", "/").replace("~0", "~")
        if not key:
            continue
        if op.get("op") == "remove" and not rest:
            writes.append((key, DELETED, None, writer))
        else:
            writes.append((key, op.get("value"), None if not rest else _merged, writer))
    return writes


def _merged(current: Any, new: Any) -> Any:
    """The handler of a committed write made inside a key (an append, an update): a merge."""
    raise AssertionError("a committed write is checked, never replayed")


def split_ops(ops: list[Any], ends: Mapping[int, int], indexes: Sequence[int]) -> list[list[Any]]:
    """The `state_delta` of each call in `indexes` (the places of the results joining the
    history, in order), cut at `ends` (`merge_branches`'): the router's writes before the
    fork go with the first, anything after the last call's writes with the last."""
    deltas: list[list[Any]] = []
    start = 0
    for index in indexes:
        end = max(ends.get(index, start), start)
        deltas.append(ops[start:end])
        start = end
    if deltas and start < len(ops):
        deltas[-1] = [*deltas[-1], *ops[start:]]
    return deltas


def _replaces(kv: KV, write: BranchWrite) -> bool:
    key, value, handler, _ = write
    return value is DELETED or (handler or kv.spec(key).handler) is replace_values


def _resolve(
    kv: KV, branches: Sequence[tuple[str, list[BranchWrite]]]
) -> list[tuple[str, list[BranchWrite]]]:
    """The writes to replay, conflicts resolved by the keys' rules (or refused)."""
    writers: dict[str, list[int]] = {}  # key -> indexes of the branches that wrote it
    for index, (_, writes) in enumerate(branches):
        for key in dict.fromkeys(write[0] for write in writes):
            writers.setdefault(key, []).append(index)
    keep: dict[str, set[int]] = {}  # key -> branches whose writes to it are replayed
    merge_with: dict[str, Any] = {}  # key -> the conflict function later branches merge through
    for key, indexes in writers.items():
        if len(indexes) < 2:
            continue
        replacing = [
            i for i in indexes if any(w[0] == key and _replaces(kv, w) for w in branches[i][1])
        ]
        if not replacing:
            continue  # every write merges (lists append, dicts update): nothing to resolve
        rule = kv.spec(key).conflict
        if rule == "first":
            keep[key] = {indexes[0]}
        elif rule == "last":
            keep[key] = {indexes[-1]}
        elif callable(rule):
            merge_with[key] = rule
        else:
            first, second = (
                (indexes[0], replacing[0])
                if replacing[0] != indexes[0]
                else (
                    indexes[0],
                    indexes[1],
                )
            )
            raise _conflict(key, branches[first], branches[second])
    if not keep and not merge_with:
        return list(branches)
    plan: list[tuple[str, list[BranchWrite]]] = []
    for index, (branch_id, writes) in enumerate(branches):
        kept: list[BranchWrite] = []
        for write in writes:
            key = write[0]
            if key in keep and index not in keep[key]:
                continue
            if key in merge_with and index != writers[key][0] and write[1] is not DELETED:
                earlier = max(i for i in writers[key] if i < index)
                merge = _ConflictMerge(
                    key,
                    merge_with[key],
                    write[2],
                    _last_writer(key, branches[earlier]),
                    as_writer(with_branch(write[3], branch_id)),
                )
                write = (key, write[1], merge, write[3])
            kept.append(write)
        plan.append((branch_id, kept))
    return plan


class _ConflictMerge:
    """A key's conflict function `fn(current, new)` as the handler of a later branch's write:
    one that raises is a `StateConflictError` naming the key and both writers (the key stays
    unresolved, nothing is merged), its exception the cause. The error's message names the
    exception's type, never its text: a library error reaches an AG-UI client and a
    supervisor's model as it is, and the function's exception may hold anything (the
    `__cause__` has it whole). `own` is the write's own handler, for a key an earlier branch
    deleted (no value to merge into: the value is written as it is)."""

    __slots__ = ("earlier", "fn", "key", "later", "own")

    def __init__(self, key: str, fn: Any, own: Any, earlier: Writer, later: Writer) -> None:
        self.key, self.fn, self.own, self.earlier, self.later = key, fn, own, earlier, later

    def __call__(self, current: Any, new: Any) -> Any:
        try:
            return self.fn(current, new)
        except Exception as exc:
            raise StateConflictError(
                f"state key {self.key!r}: its conflict function failed merging the write of "
                f"{_describe(self.later)} into that of {_describe(self.earlier)}: it raised "
                f"{type(exc).__name__} (the error's __cause__)",
                key=self.key,
                writers=(self.earlier, self.later),
            ) from exc


def _conflict(
    key: str, first: tuple[str, list[BranchWrite]], second: tuple[str, list[BranchWrite]]
) -> StateConflictError:
    one = _last_writer(key, first)
    two = _last_writer(key, second)
    return StateConflictError(
        f"state key {key!r} was written by two parallel branches: {_describe(one)} and "
        f"{_describe(two)}; its handler replaces, so the outcome would depend on which "
        "merges last. Give the key a merging handler, or a schema entry "
        '"conflict": "first" | "last" | fn(current, new)',
        key=key,
        writers=(one, two),
    )


def _last_writer(key: str, branch: tuple[str, list[BranchWrite]]) -> Writer:
    branch_id, writes = branch
    writer = [w[3] for w in writes if w[0] == key][-1]
    return as_writer(with_branch(writer, branch_id))


def _describe(writer: Writer) -> str:
    text = f"agent {writer.agent!r}" if writer.agent else f"the {writer.source}"
    if writer.tool:
        text += f" (tool {writer.tool!r})"
    return f"{text} in branch {writer.branch!r}"
