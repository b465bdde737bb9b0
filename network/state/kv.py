"""The key-value store at the heart of a run's state.

Every write goes through the key's merge handler and type, is recorded as RFC 6902 operations
against the state's JSON form, and is attributed to a writer. A write that fails validation
changes nothing. Values handed out are copies: mutating them never changes the store.

Stored containers are private to the store, so a `merge_lists` append extends the stored list in
place and records one `add /key/-` per item: the cost of an append does not grow with the
list. A savepoint journal makes a group of writes undoable (a failed tool's writes, say).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from network.errors import StateError
from network.state.handlers import (
    first_merge,
    merge_dicts,
    merge_lists,
    not_a_mapping,
    replace_values,
    write_handler,
)
from network.state.provenance import (
    CALLER_FIELDS,
    LogEntry,
    WriteRecord,
    WriterFields,
    write_record,
)
from network.state.schema import Handler, KeySpec, StateSchema, validation_error
from network.state.scopes import keys_held
from network.state.storable import plain_json_copy
from network.state.values import (
    ATOMIC_TYPES,
    JSON_ATOMIC_TYPES,
    ListView,
    copy_value,
    is_flat,
)

MISSING: Any = object()

Op = dict[str, Any]

# Keys whose writes a thread store re-applies with their handler (see `take_shared_writes`).
_SHARED_PREFIXES = ("user:", "app:")


class KV:
    """The state's key-value store: `get`, `set`, `delete`, `has`, `keys` and `data`."""

    __slots__ = (
        "_corrections",
        "_data",
        "_extra_specs",
        "_flat",
        "_journal",
        "_log",
        "_ops",
        "_published",
        "_schema",
        "_shared",
        "record_shared_writes",
        "writer",
    )

    def __init__(self, schema: StateSchema | None = None) -> None:
        self._schema = schema or StateSchema()
        self._data: dict[str, Any] = {}
        self._flat: set[str] = set()  # keys whose value copies with one C-level copy()
        self._extra_specs: dict[str, KeySpec] = {}  # specs of undeclared keys, built once
        self._ops: list[Op] = []  # persistent-key ops not yet taken by `take_ops`
        self._published = 0  # how many of them `unpublished_ops` handed out already
        self._corrections: list[Op] | None = None  # see `rollback`: shown, then undone
        self._log: list[LogEntry] = []  # every successful write, in order
        self._journal: list[tuple[str, str, Any, bool]] | None = None
        self.writer: WriterFields = CALLER_FIELDS  # on whose behalf the store is written now
        self._shared: list[tuple[str, Any, Handler]] = []  # see take_shared_writes
        self.record_shared_writes = False  # a persisted run turns it on

    # -- reads -------------------------------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        """A copy of the value stored under `key`, or `default` when there is none."""
        value = self._data.get(key, MISSING)
        if value is MISSING:
            return default
        if key in self._flat:  # `copy_known_flat`, written out: routers read keys every step
            kind = type(value)
            return value.copy() if kind is list or kind is dict else value
        return copy_value(value)

    def view(self, key: str, default: Any = None) -> Any:
        """The value under `key` without a copy, read-only, or `default` when there is none.

        A list comes back as a read-only sequence (`ListView`), a dict as a read-only mapping.
        It is a window on the stored object, so read it right away rather than keeping it: an
        append or merge shows through it, a write that replaces the value does not. Other
        values, and anything nested inside a list or dict, are the stored objects themselves:
        read them, never change them. For routers and tools that read a large value on every
        step (a growing list, a dict of generated files), where `get`'s copy costs as much as
        the value is long.
        """
        value = self._data.get(key, MISSING)
        if value is MISSING:
            return default
        kind = type(value)  # `read_only`, written out: routers read keys every step
        if kind is list:
            return ListView(value)
        return MappingProxyType(value) if kind is dict else value

    def __getitem__(self, key: str) -> Any:
        """`kv[key]`: `get(key)`'s copy, or a KeyError when `key` holds no value (the docs'
        `state.kv["files"]` was a TypeError: the store was not subscriptable)."""
        value = self.get(key, MISSING)
        if value is MISSING:
            raise KeyError(key)
        return value

    def has(self, key: str) -> bool:
        """Whether `key` holds a value."""
        return key in self._data

    __contains__ = has

    def keys(self) -> list[str]:
        """The keys that hold a value, in the order they were first written."""
        return list(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._data))

    @property
    def data(self) -> dict[str, Any]:
        """A snapshot of every key (all scopes); changing it does not change the store."""
        return {key: self.get(key) for key in self._data}

    @property
    def schema(self) -> StateSchema:
        """The schema that types and merges this store's keys."""
        return self._schema

    def spec(self, key: str) -> KeySpec:
        """The spec a write to `key` goes through (raises for an undeclared key when closed)."""
        spec = self._schema.spec(key)
        if spec is not None:
            return spec
        spec = self._extra_specs.get(key)
        if spec is None:
            spec = self._extra_specs[key] = self._schema.require(key)
        return spec

    # -- writes ------------------------------------------------------------------------------

    def set(self, key: str, value: Any, handler: Handler | None = None) -> None:
        """Merge `value` into `key` with the key's handler (or `handler`, for this write only).

        The merged value is validated against the key's type and the validated value is stored.
        A value state cannot hold (a live object: see `network.state.storable`) raises
        `UnstorableValueError`. On a `StateValidationError` (or a handler that raises) nothing
        changes.
        """
        spec = self._schema._specs.get(key) or self.spec(key)
        merge = spec.handler if handler is None else write_handler(key, handler, spec.handler)
        current = self._data.get(key, MISSING)
        check = spec.check
        untyped = spec.adapter is None
        if check is not None and (
            merge is merge_lists
            or merge is merge_dicts
            or (merge is replace_values and not untyped)
        ):
            check(value)  # a ready handler keeps plain JSON plain: checking the input suffices
        if (
            merge is merge_lists
            and spec.list_items
            and (current is MISSING or type(current) is list)
        ):
            kind = type(value)
            items = value if kind is list else (list(value) if kind is tuple else [value])
            validator = spec.items_validator
            if validator is not None:  # `spec.validate_items`, written out
                try:
                    items = validator.validate_python(items)
                except validation_error() as exc:
                    raise spec.items_error(exc) from exc
            self._append(spec, current, items)
        elif (
            merge is merge_dicts
            and spec.dict_entries
            and (current is MISSING or type(current) is dict)
        ):
            if not isinstance(value, Mapping):
                raise not_a_mapping(key, spec.type_label, value)
            self._merge_entries(spec, current, spec.validate_entries(value))
        elif merge is replace_values:
            if untyped:  # checked to be plain JSON and copied, in one walk
                validated = plain_json_copy(key, value)
            else:
                # A copy even of a validated value: pydantic hands `Any` parts and model
                # instances back as they came, and the caller keeps no handle on the store.
                validated = spec.validate(value)
                if validated is value or not spec.fresh:
                    validated = copy_value(validated)
            self._replace(spec, current, validated)
        else:
            base = None if current is MISSING else copy_value(current)
            if merge is merge_dicts:  # its own TypeErrors name no key
                if not isinstance(value, Mapping):
                    raise not_a_mapping(key, spec.type_label, value)
                if base is not None and not isinstance(base, Mapping):
                    raise StateError(
                        f"state key {key!r} holds a {type(base).__name__}: merge_dicts merges "
                        "a mapping into a mapping",
                        key=key,
                    )
            merged = spec.validate(
                first_merge(merge, spec.type, value) if base is None else merge(base, value)
            )
            if check is not None:
                check(merged)
            self._replace(spec, current, copy_value(merged))
        if self.record_shared_writes and key.startswith(_SHARED_PREFIXES):
            self._shared.append((key, copy_value(value), merge))

    def delete(self, key: str) -> bool:
        """Remove `key`; returns whether it held a value."""
        current = self._data.get(key, MISSING)
        if current is MISSING:
            return False
        spec = self.spec(key)
        self._remember(key, "restore", current)
        del self._data[key]
        self._flat.discard(key)
        if spec.persistent:
            self._ops.append({"op": "remove", "path": spec.pointer})
        self._log.append((key, "delete", time.time(), *self.writer))
        if self.record_shared_writes and key.startswith(_SHARED_PREFIXES):
            self._shared.append((key, MISSING, replace_values))
        return True

    def seed(self, values: Mapping[str, Any]) -> None:
        """Load initial values: validated by the schema, handlers not applied, no ops recorded.

        All values are validated before any is stored, so a bad seed leaves the store empty.
        """
        prepared = []
        for key, value in values.items():
            spec = self.spec(key)
            validated = spec.validate(value)
            if spec.check is not None:
                spec.check(validated)
            prepared.append((key, copy_value(validated)))
        for key, value in prepared:
            self._data[key] = value
            if is_flat(value):
                self._flat.add(key)
            else:
                self._flat.discard(key)

    def _append(self, spec: KeySpec, current: Any, items: list[Any]) -> None:
        # The store keeps copies of anything mutable it is given: a caller (or a tool's result)
        # changing an object it passed in must never change the state behind the store's back.
        key = spec.key
        if current is MISSING:
            stored = [item if type(item) in ATOMIC_TYPES else copy_value(item) for item in items]
            self._remember(key, "restore", MISSING)
            self._data[key] = stored
            if is_flat(stored):
                self._flat.add(key)
            if spec.persistent:
                self._ops.append(
                    {"op": "add", "path": spec.pointer, "value": spec.json_copy(stored)}
                )
        else:
            if self._journal is not None:
                self._journal.append((key, "truncate", len(current), key in self._flat))
            # One op per item, so an append costs the same however long the list is.
            ops = self._ops if spec.persistent else None
            path = spec.append_path
            for item in items:
                if type(item) in JSON_ATOMIC_TYPES:  # its own JSON form, as the op's value
                    current.append(item)
                    if ops is not None:
                        ops.append({"op": "add", "path": path, "value": item})
                else:
                    self._flat.discard(key)
                    current.append(copy_value(item))
                    if ops is not None:
                        ops.append({"op": "add", "path": path, "value": spec.item_json(item)})
        self._log.append((key, "set", time.time(), *self.writer))

    def _merge_entries(self, spec: KeySpec, current: Any, entries: dict[Any, Any]) -> None:
        key = spec.key
        if current is MISSING:
            self._replace(spec, current, copy_value(entries))
            return
        self._remember(key, "restore", dict(current))
        ops = self._ops if spec.persistent else None
        prefix = spec.pointer + "/"
        for name, entry in entries.items():
            if type(entry) in JSON_ATOMIC_TYPES:  # its own JSON form, as the op's value
                current[name] = entry
                value = entry
            else:
                self._flat.discard(key)
                current[name] = copy_value(entry)
                value = spec.entry_json(entry)
            if ops is not None:
                path = prefix + str(name).replace("~", "~0").replace("/", "~1")
                ops.append({"op": "add", "path": path, "value": value})
        self._log.append((key, "set", time.time(), *self.writer))

    def _replace(self, spec: KeySpec, current: Any, validated: Any) -> None:
        key = spec.key
        self._remember(key, "restore", current)
        self._data[key] = validated
        if is_flat(validated):
            self._flat.add(key)
        else:
            self._flat.discard(key)
        if spec.persistent:
            self._ops.append(
                {"op": "add", "path": spec.pointer, "value": spec.json_copy(validated)}
            )
        self._log.append((key, "set", time.time(), *self.writer))

    # -- deltas and provenance ---------------------------------------------------------------

    def take_ops(self) -> list[Op]:
        """The operations recorded since the last call (persistent keys only), and forget them."""
        ops = self._ops
        self._ops = []
        self._published = 0
        return ops

    def unpublished_ops(self) -> list[Op]:
        """The operations recorded since the previous call, for an event stream to show.

        They stay pending for `take_ops` (which starts the count again): showing a change
        and recording it on a result are separate.
        """
        ops = self._ops
        start = self._published
        corrections = self._corrections
        if corrections is not None:  # undone writes a stream showed: taken back first
            self._corrections = None
            self._published = len(ops)
            return [*corrections, *ops[start:]]
        if len(ops) <= start:
            return []
        self._published = len(ops)
        return ops[start:]

    def has_unpublished_ops(self) -> bool:
        """Whether `unpublished_ops` would return anything now."""
        return len(self._ops) > self._published or self._corrections is not None

    def load_copy(self, base: KV) -> None:
        """Start this empty store as a copy of `base`: its values (copied, so the two never
        share an object) and its write log, so `history_of` shows what came before (a
        parallel branch's store: `network.state.branch`). No operations are pending."""
        for key, value in base._data.items():
            self._data[key] = copy_value(value)
        self._flat = set(base._flat)
        self._extra_specs = dict(base._extra_specs)
        self._log = list(base._log)
        self.writer = base.writer

    def pending_op_count(self) -> int:
        """How many operations `take_ops` would return now."""
        return len(self._ops)

    def history_of(self, key: str) -> list[WriteRecord]:
        """Every successful write to `key`, oldest first."""
        return [write_record(entry) for entry in self._log if entry[0] == key]

    def take_shared_writes(self) -> list[tuple[str, Any, Handler]]:
        """The raw writes to `user:` / `app:` keys since the last call, and forget them.

        Recorded only while `record_shared_writes` is on. Each is `(key, input, handler)`, the
        input being `MISSING` for a delete. A thread store re-applies them with the same
        handler to the value it holds, inside its commit's transaction, so that concurrent
        runs of one user (or app) each land instead of overwriting one another.
        """
        writes = self._shared
        self._shared = []
        return writes

    def writes_since(self, start: int) -> list[WriteRecord]:
        """The successful writes from position `start` of the write log on, oldest first."""
        return [write_record(entry) for entry in self._log[start:]]

    @property
    def write_count(self) -> int:
        """How many successful writes the write log holds (a position for `writes_since`)."""
        return len(self._log)

    @property
    def write_log(self) -> list[WriteRecord]:
        """Every successful write, oldest first."""
        return [write_record(entry) for entry in self._log]

    # -- savepoints ----------------------------------------------------------------------------

    def _remember(self, key: str, kind: str, previous: Any) -> None:
        if self._journal is not None:
            self._journal.append((key, kind, previous, key in self._flat))

    def savepoint(self) -> tuple[int, int, int, int]:
        """Start (or nest within) an undoable group of writes; returns a mark for `rollback`."""
        journal = self._journal
        if journal is None:
            self._journal = []
            return (0, len(self._ops), len(self._log), len(self._shared))
        return (len(journal), len(self._ops), len(self._log), len(self._shared))

    def rollback(self, mark: tuple[int, int, int, int]) -> None:
        """Undo every write since `mark`: values, recorded ops and provenance."""
        journal_len, ops_len, log_len, shared_len = mark
        journal = self._journal or []
        while len(journal) > journal_len:
            key, kind, previous, was_flat = journal.pop()
            if kind == "truncate":
                del self._data[key][previous:]
            elif previous is MISSING:
                self._data.pop(key, None)
            else:
                self._data[key] = previous
            if was_flat:
                self._flat.add(key)
            else:
                self._flat.discard(key)
        if self._published > ops_len:  # a stream showed some of them: it must take them back
            self._take_back(ops_len)
        del self._ops[ops_len:]
        del self._log[log_len:]
        del self._shared[shared_len:]
        if journal_len == 0:
            self._journal = None

    def _take_back(self, start: int) -> None:
        """The operations from `start` on were shown (`unpublished_ops`) and are undone: the
        operations that bring a copy which applied them back to the store's values (now
        rolled back) wait for the next `unpublished_ops`, before any new operation. The
        recorded operations (`take_ops`) never include them."""
        shown = keys_held(self._ops[start : self._published])
        corrections = self._corrections if self._corrections is not None else []
        for key, held in shown.items():
            spec = self.spec(key)
            value = self._data.get(key, MISSING)
            if value is not MISSING:
                value = spec.json_copy(value)
                corrections.append({"op": "add", "path": spec.pointer, "value": value})
            elif held:  # the copy holds a key the store does not
                corrections.append({"op": "remove", "path": spec.pointer})
        self._corrections = corrections or None
        self._published = start

    def release(self, mark: tuple[int, int, int, int]) -> None:
        """Keep the writes since `mark`; stop journaling once no savepoint is open."""
        if mark[0] == 0:
            self._journal = None

    def raw(self, key: str, default: Any = None) -> Any:
        """The stored value itself, not a copy. For the library's own read-only use."""
        return self._data.get(key, default)

    def __repr__(self) -> str:
        return f"KV({self.data!r})"
