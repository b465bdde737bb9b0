"""Merge handlers: how a write to a state key combines with the value already there.

A handler is any `handler(current, new) -> merged`; `current` is None on a key's first write,
except for a function of Python's `operator` module (LangGraph's `operator.add` reducer), which
starts from the key type's empty value (see `first_merge`).
The three ready ones are recognised by the store, which records their writes as fine-grained
JSON Patch operations (one `add /key/-` per appended item, one op per dict entry) and validates
only the new part when the key's type allows it.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any, get_origin

from network.errors import StateError, StateValidationError


def replace_values(current: Any, new: Any) -> Any:
    """Store `new`, whatever was there. The default for every type that is not a list."""
    return new


def merge_lists(current: Any, new: Any) -> list[Any]:
    """Append `new` to the list already stored. The default for `list` and `list[X]` types.

    A scalar on either side is treated as a one-item list (as in Haystack), so `set(k, 5)`
    followed by `set(k, [6])` stores `[5, 6]`.
    """
    head = [] if current is None else (list(current) if isinstance(current, list) else [current])
    tail = list(new) if isinstance(new, list | tuple) else [new]
    return head + tail


def merge_dicts(current: Any, new: Any) -> dict[Any, Any]:
    """Update the stored mapping with the entries of `new` (a shallow merge)."""
    if not isinstance(new, Mapping):
        raise TypeError(f"merge_dicts needs a mapping to merge, got {type(new).__name__}")
    if current is None:
        return dict(new)
    if not isinstance(current, Mapping):
        raise TypeError(f"merge_dicts cannot merge into a {type(current).__name__}")
    return {**current, **new}


READY_HANDLERS = (replace_values, merge_lists, merge_dicts)

# The types whose empty value (`list()`, `0`, ...) an `operator` function starts from.
_EMPTY_STARTS = (list, dict, tuple, str, int, float)
_OPERATOR_MODULES = frozenset({"operator", "_operator", operator.__name__})


def first_merge(handler: Any, key_type: Any, new: Any) -> Any:
    """What `handler` makes of `new` written to a key that holds no value.

    A handler gets None as `current`, except a function of Python's `operator` module
    (`operator.add`, `operator.or_`: LangGraph's reducers), which cannot take None: it starts
    from the key type's empty value (`[]`, `{}`, `0`, `""`), as LangGraph's reducer channels
    do, and for a type with no such value (`Optional[list]`, `Any`) the first value is stored
    as given (LangGraph's rule too). Before, `Annotated[list[str], operator.add]` failed its
    first write with a bare TypeError.
    """
    if getattr(handler, "__module__", None) not in _OPERATOR_MODULES:
        return handler(None, new)
    origin = get_origin(key_type) or key_type
    if origin in _EMPTY_STARTS:
        return handler(origin(), new)
    return new


def write_handler(key: str, handler: Any, default: Any) -> Any:
    """The handler of one write to `key`: `handler` (Haystack's `handler_override`) when
    given, else the key's `default`. A `handler` that is not callable is a `StateError` naming
    the key before anything is merged, where calling it would raise a bare `TypeError` that
    names no key (and a falsy one, `0` or `""`, would have fallen back to the default)."""
    if handler is None:
        return default
    if not callable(handler):
        raise StateError(
            f"state key {key!r}: handler {handler!r} is not callable; a handler is "
            "fn(current, new) -> merged, such as merge_lists",
            key=key,
        )
    return handler


def not_a_mapping(key: str, expected: str, value: Any) -> StateValidationError:
    """What a write of `value` to `key`, whose handler is `merge_dicts`, raises when `value` is
    not a mapping: the value's fault, named by key (the handler's own TypeError names none)."""
    return StateValidationError(
        f"state key {key!r} merges dicts (merge_dicts): got {type(value).__name__}, not a mapping",
        key=key,
        expected=expected,
    )
