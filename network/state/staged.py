"""A tool's private view of the store, so concurrent tools never see each other half-done.

Reads see the store plus the tool's own writes. Writes are checked at once (a bad value raises
`StateValidationError` inside the tool, where it can be handled) but only reach the store when
`commit` applies them, after the tool returned, in the order the model listed the calls. A tool
that raises is never committed, so it leaves none of its writes behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from network.state.handlers import (
    first_merge,
    merge_dicts,
    merge_lists,
    not_a_mapping,
    replace_values,
    write_handler,
)
from network.state.kv import KV, MISSING
from network.state.schema import Handler
from network.state.values import copy_value, read_only

_DELETE: Any = object()


class StagedKV:
    """The `kv` a tool sees: the same API as `KV`, with writes held back until `commit`."""

    __slots__ = ("_base", "_writes")

    def __init__(self, base: KV) -> None:
        self._base = base
        self._writes: list[tuple[str, Any, Handler | None]] = []

    # -- reads -------------------------------------------------------------------------------

    def _view(self, key: str) -> Any:
        """The value this tool sees for `key` (not a copy), or `MISSING`."""
        value = self._base.raw(key, MISSING)
        copied = False
        for written_key, written, handler in self._writes:
            if written_key != key:
                continue
            if written is _DELETE:
                value, copied = MISSING, True
                continue
            spec = self._base.spec(key)
            merge = handler or spec.handler
            if merge is replace_values:
                value = written
            elif value is MISSING:
                value = first_merge(merge, spec.type, written)
            else:
                value = merge(value if copied else copy_value(value), written)
            copied = True
        return value

    def get(self, key: str, default: Any = None) -> Any:
        """A copy of what this tool sees under `key`."""
        if not any(written_key == key for written_key, _, _ in self._writes):
            return self._base.get(key, default)
        value = self._view(key)
        return default if value is MISSING else copy_value(value)

    def view(self, key: str, default: Any = None) -> Any:
        """What this tool sees under `key`, read-only and uncopied (see `KV.view`)."""
        value = self._view(key)
        return default if value is MISSING else read_only(value)

    def __getitem__(self, key: str) -> Any:
        """`kv[key]`: `get(key)`'s copy, or a KeyError when `key` holds no value."""
        value = self.get(key, MISSING)
        if value is MISSING:
            raise KeyError(key)
        return value

    def has(self, key: str) -> bool:
        """Whether `key` holds a value, as this tool sees it."""
        return self._view(key) is not MISSING

    __contains__ = has

    def keys(self) -> list[str]:
        """Keys holding a value, as this tool sees them."""
        names = dict.fromkeys([*self._base.keys(), *(k for k, _, _ in self._writes)])
        return [key for key in names if self.has(key)]

    @property
    def data(self) -> dict[str, Any]:
        """A snapshot of what this tool sees."""
        return {key: self.get(key) for key in self.keys()}

    @property
    def schema(self) -> Any:
        """The store's schema."""
        return self._base.schema

    def history_of(self, key: str) -> list[Any]:
        """Committed writes to `key` (this tool's own are not committed yet)."""
        return self._base.history_of(key)

    # -- writes ------------------------------------------------------------------------------

    def set(self, key: str, value: Any, handler: Handler | None = None) -> None:
        """Stage a write; it is validated now and applied when the tool's call is committed."""
        spec = self._base.spec(key)
        merge = spec.handler if handler is None else write_handler(key, handler, spec.handler)
        if spec.check is not None and merge in (replace_values, merge_lists, merge_dicts):
            spec.check(value)  # refused here, inside the tool, not at commit
        if merge is merge_lists and spec.list_items:
            items = list(value) if isinstance(value, list | tuple) else [value]
            checked: Any = spec.validate_items(items)
        elif merge is merge_dicts and spec.dict_entries and isinstance(value, Mapping):
            checked = spec.validate_entries(value)
        elif merge is replace_values:
            checked = copy_value(spec.validate(value))
        else:
            if merge is merge_dicts and not isinstance(value, Mapping):
                raise not_a_mapping(key, spec.type_label, value)
            current = self._view(key)
            merged = spec.validate(
                first_merge(merge, spec.type, value)
                if current is MISSING
                else merge(copy_value(current), value)
            )
            if spec.check is not None:
                spec.check(merged)
            checked = copy_value(value)
        self._writes.append((key, checked, handler))

    def delete(self, key: str) -> bool:
        """Stage the removal of `key`; returns whether this tool saw a value there.

        The removal is staged even when this tool sees no value: a call listed earlier in the
        same model answer may write the key, and writes apply in the model's order, so the
        delete that comes after it must still remove it at commit time.
        """
        existed = self.has(key)
        schema = self._base.schema
        if existed or not schema.closed or key in schema:
            self._base.spec(key)
            self._writes.append((key, _DELETE, None))
        return existed

    def __len__(self) -> int:
        return len(self.keys())

    # -- commit --------------------------------------------------------------------------------

    def staged_writes(self, start: int = 0) -> list[tuple[str, Any, Handler | None, bool]]:
        """The writes staged from position `start` (a `savepoint`) on, as they were made:
        `(key, value, handler, removed)`; a removal's value is None."""
        return [
            (key, None, None, True) if value is _DELETE else (key, value, handler, False)
            for key, value, handler in self._writes[start:]
        ]

    @property
    def dirty(self) -> bool:
        """Whether this tool staged any write."""
        return bool(self._writes)

    def savepoint(self) -> int:
        """A mark for `rollback`: one try of a retried tool call starts here."""
        return len(self._writes)

    def rollback(self, mark: int) -> None:
        """Drop the writes staged since `mark` (a failed try's)."""
        del self._writes[mark:]

    def release(self, mark: int) -> None:
        """Keep the writes staged since `mark`."""

    def commit(self) -> None:
        """Apply the staged writes to the store, all or none (rolled back on any error)."""
        if not self._writes:
            return
        base = self._base
        mark = base.savepoint()
        try:
            for key, value, handler in self._writes:
                if value is _DELETE:
                    base.delete(key)
                else:
                    base.set(key, value, handler)
        except BaseException:
            base.rollback(mark)
            raise
        base.release(mark)
        self._writes.clear()
