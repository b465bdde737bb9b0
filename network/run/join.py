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
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from network.errors import StateConflictError
from network.state.branch import DELETED, BranchWrite
from network.state.handlers import replace_values
from network.state.kv import KV
from network.state.provenance import Writer, as_writer, with_branch


def merge_branches(
    kv: KV,
    branches: Sequence[tuple[str, list[BranchWrite]]],
    committed: Collection[str] = (),
) -> list[int]:
    """Merge each `(branch id, writes)` into `kv`, in the order given.

    `committed`: ids of branches among `branches` whose writes are in `kv` already (the
    siblings a re-run of failed branches joins, see `committed_writes`): they take part in
    the conflict check, in their declared place, and are not written again.

    Returns, per branch not committed, how many state operations were pending in `kv` once
    its writes were in (`split_ops` cuts the operations taken afterwards into each branch's
    delta).
    """
    plan = _resolve(kv, branches)
    previous = kv.writer
    mark = kv.savepoint()
    ends: list[int] = []
    try:
        for branch_id, writes in plan:
            if branch_id in committed:
                continue
            for key, value, handler, writer in writes:
                kv.writer = with_branch(writer, branch_id)
                if value is DELETED:
                    kv.delete(key)
                else:
                    kv.set(key, value, handler)
            ends.append(kv.pending_op_count())
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


def split_ops(ops: list[Any], ends: list[int]) -> list[list[Any]]:
    """Each branch's `state_delta`: the router's writes before the fork go with the first."""
    deltas, start = [], 0
    for end in ends:
        deltas.append(ops[start:end])
        start = end
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
                write = (key, write[1], merge_with[key], write[3])
            kept.append(write)
        plan.append((branch_id, kept))
    return plan


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
