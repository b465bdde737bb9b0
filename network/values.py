"""Copying stored values so that nothing handed out can change the store behind its back."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

ATOMIC_TYPES: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes})


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
    if isinstance(value, BaseModel):
        return value.model_copy(deep=True)
    return copy.deepcopy(value)


def copy_known_flat(value: Any) -> Any:
    """Copy a value already known to be flat (see `is_flat`)."""
    kind = type(value)
    if kind is list or kind is dict:
        return value.copy()
    return value
