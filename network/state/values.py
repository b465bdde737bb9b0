"""Copying stored values so that nothing handed out can change the store behind its back."""

from __future__ import annotations

import copy
import dataclasses
import sys
from collections.abc import Callable, Iterator, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeGuard, overload

from network.utf8 import BYTES, bytes_text

if TYPE_CHECKING:
    from pydantic import BaseModel

ATOMIC_TYPES: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes})
JSON_ATOMIC_TYPES: frozenset[type] = ATOMIC_TYPES - {bytes}
"""Atomic values that are their own JSON form (bytes are not: a typed key's adapter gives
them one, `network.state.schema`)."""


def is_pydantic_model(value: Any) -> TypeGuard[BaseModel]:
    """`isinstance(value, pydantic.BaseModel)` without importing pydantic.

    Until something has imported pydantic no value can be one of its models, so `import
    network` (which imports no pydantic) stays cheap and the check costs one dict lookup.
    """
    main = sys.modules.get("pydantic.main")
    return main is not None and isinstance(value, main.BaseModel)


def json_part(value: Any, otherwise: Callable[[Any], Any] | None = None) -> Any:
    """A part of a value that `json` cannot write, as JSON data (a `default=` for
    `json.dumps`), one rule for a tool's result and an interrupt's response, the model reading
    both: bytes as `bytes_text` (their UTF-8 text, else `{"base64": ...}`), a pydantic model or
    a dataclass instance as its JSON data, wherever it sits; anything else `otherwise(value)`,
    or json's own `TypeError` when there is none."""
    if isinstance(value, BYTES):
        return bytes_text(value)
    if is_pydantic_model(value) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        from pydantic_core import to_jsonable_python  # noqa: PLC0415 (loaded with pydantic)

        return to_jsonable_python(value, fallback=str)
    if otherwise is not None:
        return otherwise(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def is_pydantic_model_class(tp: Any) -> TypeGuard[type[BaseModel]]:
    """`issubclass(tp, pydantic.BaseModel)` for a class, without importing pydantic."""
    main = sys.modules.get("pydantic.main")
    return main is not None and isinstance(tp, type) and issubclass(tp, main.BaseModel)


def is_flat(value: Any) -> bool:
    """True when `value` is atomic, or a list or dict whose items are all atomic.

    A flat value is copied with one C-level `copy()`, which keeps reads of long lists cheap.
    """
    kind = type(value)
    if kind in ATOMIC_TYPES:
        return True
    if kind is list:
        return all(type(item) in ATOMIC_TYPES for item in value)
    if kind is dict:
        return all(type(item) in ATOMIC_TYPES for item in value.values())
    return False


def copy_value(value: Any) -> Any:
    """A deep copy of a JSON-like value (fast paths for atomics, lists, dicts and models)."""
    kind = type(value)
    if kind in ATOMIC_TYPES:
        return value
    if kind is list:
        return [item if type(item) in ATOMIC_TYPES else copy_value(item) for item in value]
    if kind is dict:
        return {
            key: item if type(item) in ATOMIC_TYPES else copy_value(item)
            for key, item in value.items()
        }
    if kind is tuple:
        return tuple(copy_value(item) for item in value)
    if is_pydantic_model(value):
        return value.model_copy(deep=True)
    return copy.deepcopy(value)


def copy_known_flat(value: Any) -> Any:
    """Copy a value already known to be flat (see `is_flat`)."""
    kind = type(value)
    if kind is list or kind is dict:
        return value.copy()
    return value


class ListView(Sequence[Any]):
    """A read-only view of a stored list: no copy is made, and later appends show through it."""

    __slots__ = ("_items",)

    def __init__(self, items: list[Any]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        return self._items[index]  # a slice is a new list: the caller's to change

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ListView):
            return self._items == other._items
        if isinstance(other, list | tuple):
            return self._items == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ListView({self._items!r})"


def read_only(value: Any) -> Any:
    """`value` without a copy: a list as a `ListView`, a dict as a `MappingProxyType`."""
    kind = type(value)
    if kind is list:
        return ListView(value)
    if kind is dict:
        return MappingProxyType(value)
    return value
