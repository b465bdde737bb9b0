"""A parallel branch's own store: a copy of the run's store taken at the fork.

A branch reads and writes it like the run's store (handlers, types, savepoints, provenance),
so an agent call runs in it unchanged. Besides applying each write, it records the write as it
was made (key, value, handler, writer): at the join those raw writes are replayed into the
run's store in declared branch order, through each key's handler (`network.run.join`). Its
operations are never streamed: what a client sees is the merged outcome, once, at the join.
"""

from __future__ import annotations

from typing import Any

from network.sentinels import DELETED
from network.state.kv import KV
from network.state.provenance import WriterFields
from network.state.schema import Handler
from network.state.values import copy_value

# key, value (or DELETED), handler, writer
BranchWrite = tuple[str, Any, Handler | None, WriterFields]


class BranchKV(KV):
    """The store of one parallel branch (see module docstring)."""

    __slots__ = ("_write_marks", "writes")

    def __init__(self, base: KV) -> None:
        super().__init__(base.schema)
        self.load_copy(base)  # the store as it was at the fork
        self.writes: list[BranchWrite] = []
        self._write_marks: dict[tuple[int, int, int, int], int] = {}

    def set(self, key: str, value: Any, handler: Handler | None = None) -> None:
        """Apply the write here, and record it for the join."""
        super().set(key, value, handler)
        self.writes.append((key, copy_value(value), handler, self.writer))

    def delete(self, key: str) -> bool:
        """Remove `key` here, and record the removal for the join."""
        existed = super().delete(key)
        if existed:
            self.writes.append((key, DELETED, None, self.writer))
        return existed

    def unpublished_ops(self) -> list[dict[str, Any]]:
        """Nothing: a branch's changes reach an event stream merged, at the join."""
        return []

    def has_unpublished_ops(self) -> bool:
        """False: see `unpublished_ops`."""
        return False

    def savepoint(self) -> tuple[int, int, int, int]:
        mark = super().savepoint()
        self._write_marks[mark] = len(self.writes)
        return mark

    def rollback(self, mark: tuple[int, int, int, int]) -> None:
        super().rollback(mark)
        kept = self._write_marks.get(mark)
        if kept is not None:
            del self.writes[kept:]  # a failed tool's writes never reach the join

    def release(self, mark: tuple[int, int, int, int]) -> None:
        super().release(mark)
        self._write_marks.pop(mark, None)
