"""The rules every memory store applies to what it is given, checked before any is touched.

Namespaces, keys and metadata come from outside (a model's tool call, an HTTP body), and each
database has its limits, so one set of rules holds for every backend:

- a namespace is a tuple (or list) of 1 to `MAX_DEPTH` labels; a label and a key follow the
  thread stores' identifier rules (1 to 256 characters, not blank, no control character, no
  lone surrogate: `network.threads.ids`). Labels are joined with U+001F, which no label can
  hold, so one namespace never reads as another;
- a value is JSON data (no NaN or infinity, no set, no object, a dict's keys strings) of
  at most `MAX_VALUE_BYTES` encoded; the text embedded is 1 to `MAX_TEXT` characters, not
  blank, without NUL (PostgreSQL's text has none) or a lone surrogate;
- metadata is a flat dict of at most `MAX_METADATA` entries whose names are identifiers
  (`^[A-Za-z_][A-Za-z0-9_]{0,63}$`, safe in every database's JSON path) and whose values are
  strings (at most `MAX_LABEL` characters), finite numbers, bools or None;
- a filter maps metadata names to a value (equality) or `{"$in": [values]}` (any of them);
- a ttl is a finite number of seconds above 0 (at most ten years); a limit a positive int.

Anything else is `InvalidMemoryError` naming the field; nothing is written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from network.errors import InvalidIdError, InvalidMemoryError
from network.memory.items import Namespace, Scalar
from network.threads.ids import check_id
from network.utf8 import lone_surrogate_at

MAX_DEPTH = 8
MAX_VALUE_BYTES = 64 * 1024
MAX_TEXT = 8_000
MAX_METADATA = 32
MAX_LABEL = 1_024
MAX_QUERY = 8_000
MAX_TTL = 10 * 365 * 24 * 3600.0
MAX_LIMIT = 1_000
MAX_LIST = 10_000
SEPARATOR = "\x1f"  # between a namespace's labels: a control character no label may hold
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

__all__ = [
    "MAX_DEPTH",
    "MAX_LIMIT",
    "MAX_TEXT",
    "MAX_VALUE_BYTES",
    "Condition",
    "check_filter",
    "check_key",
    "check_limit",
    "check_metadata",
    "check_namespace",
    "check_query",
    "check_ttl",
    "check_value",
    "decode_namespace",
    "encode_namespace",
]


def _as_memory_error(field: str, error: InvalidIdError) -> InvalidMemoryError:
    message = str(error).replace("thread store", "memory store")
    return InvalidMemoryError(message, field=field)


def check_namespace(namespace: Any, field: str = "namespace") -> Namespace:
    """`namespace` as a tuple of valid labels, else `InvalidMemoryError`."""
    if isinstance(namespace, str) or not isinstance(namespace, tuple | list):
        raise InvalidMemoryError(
            f"{field} must be a tuple of labels, such as ('users', 'ann'), got "
            f"{type(namespace).__name__}",
            field=field,
        )
    if not 1 <= len(namespace) <= MAX_DEPTH:
        raise InvalidMemoryError(
            f"{field} must have 1 to {MAX_DEPTH} labels, got {len(namespace)}", field=field
        )
    for at, label in enumerate(namespace):
        try:
            check_id(f"{field}[{at}]", label)
        except InvalidIdError as error:
            raise _as_memory_error(field, error) from None
    return tuple(namespace)


def encode_namespace(namespace: Namespace) -> str:
    """The text a database keeps for a (checked) namespace."""
    return SEPARATOR.join(namespace)


def decode_namespace(text: str) -> Namespace:
    """The namespace `encode_namespace` made `text` from."""
    return tuple(text.split(SEPARATOR))


def check_key(key: Any) -> str:
    """A memory's key, by the identifier rules."""
    try:
        return check_id("key", key)
    except InvalidIdError as error:
        raise _as_memory_error("key", error) from None


_JSON_DATA = (
    "value must be JSON data (strings, finite numbers, bools, None, lists, dicts with string keys)"
)


def check_value(value: Any) -> str:
    """The JSON text of `value` (JSON data only, no NaN or infinity, bounded in size)."""
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise InvalidMemoryError(f"{_JSON_DATA}: {error}", field="value") from None
    except RecursionError:  # json.dumps follows nesting by recursion
        raise InvalidMemoryError(f"{_JSON_DATA}: it nests too deep", field="value") from None
    _no_surrogate("value", text)
    size = len(text.encode("utf-8"))
    if size > MAX_VALUE_BYTES:
        raise InvalidMemoryError(
            f"value is {size} bytes as JSON, over the limit of {MAX_VALUE_BYTES}", field="value"
        )
    _string_keys(value)
    return text


def _string_keys(value: Any) -> None:
    """`InvalidMemoryError` for a dict key that is not a string: json.dumps writes 1 as "1"
    (and {1: "a", "1": "b"} as two "1" keys, of which reading keeps one), so the value read
    back would not be the value written. Walked without recursion, after the size check."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str):
                    raise InvalidMemoryError(
                        f"{_JSON_DATA}: key {key!r} is not a string", field="value"
                    )
                pending.append(inner)
        elif isinstance(item, list | tuple):
            pending.extend(item)


def check_text(text: Any, field: str = "text", limit: int = MAX_TEXT) -> str:
    """Text to embed (a value's, or a query): a non-blank string of bounded length."""
    if not isinstance(text, str):
        raise InvalidMemoryError(
            f"{field} must be a string, got {type(text).__name__}", field=field
        )
    if not text.strip():
        raise InvalidMemoryError(f"{field} must not be blank", field=field)
    if len(text) > limit:
        raise InvalidMemoryError(
            f"{field} is {len(text)} characters long, over the limit of {limit}", field=field
        )
    _no_surrogate(field, text)
    if "\x00" in text:  # PostgreSQL's text has none: one rule for every backend
        raise InvalidMemoryError(
            f"{field} holds a NUL character (at {text.index(chr(0))})", field=field
        )
    return text


def check_query(query: Any) -> str:
    """A search's query text."""
    return check_text(query, "query", MAX_QUERY)


def _check_small_dict(value: Any, field: str, entries: str) -> None:
    """`InvalidMemoryError` on `field` unless `value` is a dict of at most `MAX_METADATA`
    `entries` (a metadata dict and a filter are bounded alike)."""
    if not isinstance(value, Mapping):
        raise InvalidMemoryError(f"{field} must be a dict, got {type(value).__name__}", field=field)
    if len(value) > MAX_METADATA:
        raise InvalidMemoryError(
            f"{field} has {len(value)} {entries}, over the limit of {MAX_METADATA}", field=field
        )


def check_metadata(metadata: Any) -> dict[str, Scalar]:
    """A flat dict of named scalars (see the module docstring)."""
    if metadata is None:
        return {}
    _check_small_dict(metadata, "metadata", "entries")
    checked: dict[str, Scalar] = {}
    for name, value in metadata.items():
        field = f"metadata.{_name(name, 'metadata')}"
        checked[name] = _scalar(field, value)
    return checked


def _name(name: Any, field: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidMemoryError(
            f"{field} name {name!r} must be an identifier (letters, digits and _, at most 64, "
            "not starting with a digit)",
            field=field,
        )
    return name


_INT64 = 2**63  # SQLite binds an int of 64 bits at most; the other backends follow its rule


def _scalar(field: str, value: Any) -> Scalar:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        # Taken, such a number was kept, then a filter on it raised SQLite's OverflowError
        # (no InvalidMemoryError, on one backend only); refused alike for metadata and filters.
        if not -_INT64 <= value < _INT64:
            raise InvalidMemoryError(
                f"{field} is an int outside 64 bits ({value.bit_length()} bits), which a memory "
                "store cannot compare: store it as a string",
                field=field,
            )
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidMemoryError(f"{field} must be a finite number, got {value!r}", field=field)
        return value
    if isinstance(value, str):
        if len(value) > MAX_LABEL:
            raise InvalidMemoryError(
                f"{field} is {len(value)} characters long, over the limit of {MAX_LABEL}",
                field=field,
            )
        _no_surrogate(field, value)
        if "\x00" in value:
            raise InvalidMemoryError(f"{field} holds a NUL character", field=field)
        return value
    raise InvalidMemoryError(
        f"{field} must be a string, a finite number, a bool or None, got {type(value).__name__}",
        field=field,
    )


@dataclass(frozen=True, slots=True)
class Condition:
    """One checked filter condition: metadata `name` equals one of `values`."""

    name: str
    values: tuple[Scalar, ...]

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """Whether `metadata` meets it (as every backend decides: a bool is not a number)."""
        if self.name not in metadata:
            return False
        found = metadata[self.name]
        return any(same_scalar(found, wanted) for wanted in self.values)


def same_scalar(found: Any, wanted: Scalar) -> bool:
    """Equality as JSON sees it: 1 equals 1.0, True equals neither, None equals None."""
    if isinstance(wanted, bool) or isinstance(found, bool):
        return isinstance(wanted, bool) and isinstance(found, bool) and found == wanted
    numbers = isinstance(found, int | float) and isinstance(wanted, int | float)
    return (numbers or type(found) is type(wanted)) and found == wanted


def check_filter(filter: Any) -> tuple[Condition, ...]:
    """`{name: value}` or `{name: {"$in": [values]}}` as checked conditions (all must hold)."""
    if filter is None:
        return ()
    _check_small_dict(filter, "filter", "conditions")
    conditions = []
    for name, wanted in filter.items():
        field = f"filter.{_name(name, 'filter')}"
        if isinstance(wanted, Mapping):
            if set(wanted) != {"$in"}:
                raise InvalidMemoryError(
                    f"{field} must be a value or {{'$in': [values]}}, got keys {sorted(wanted)}",
                    field=field,
                )
            options = wanted["$in"]
            if isinstance(options, str) or not isinstance(options, Sequence) or not options:
                raise InvalidMemoryError(f"{field}: $in needs a non-empty list", field=field)
            if len(options) > MAX_LIMIT:
                raise InvalidMemoryError(
                    f"{field}: $in has {len(options)} values, over the limit of {MAX_LIMIT}",
                    field=field,
                )
            values = tuple(_scalar(field, option) for option in options)
        else:
            values = (_scalar(field, wanted),)
        conditions.append(Condition(name, values))
    return tuple(conditions)


def check_ttl(ttl: Any, field: str = "ttl") -> float | None:
    """Seconds until expiry: None (never), or a finite number above 0 (at most ten years)."""
    if ttl is None:
        return None
    if (
        isinstance(ttl, bool)
        or not isinstance(ttl, int | float)
        or not 0 < ttl <= MAX_TTL  # the range first: 10**400 has no `isfinite`
        or not math.isfinite(ttl)
    ):
        raise InvalidMemoryError(
            f"{field} must be a finite number of seconds above 0 and at most {MAX_TTL:g}, "
            f"got {ttl!r}",
            field=field,
        )
    return float(ttl)


def check_limit(limit: Any, field: str = "limit", maximum: int = MAX_LIMIT) -> int:
    """A count of results: an int from 1 to `maximum` (0 for an offset's field)."""
    low = 0 if field == "offset" else 1
    top = 10**9 if field == "offset" else maximum
    if isinstance(limit, bool) or not isinstance(limit, int) or not low <= limit <= top:
        raise InvalidMemoryError(
            f"{field} must be an int from {low} to {top}, got {limit!r}", field=field
        )
    return limit


def _no_surrogate(field: str, text: str) -> None:
    at = lone_surrogate_at(text)
    if at is not None:
        raise InvalidMemoryError(
            f"{field} holds a lone surrogate (U+{ord(text[at]):04X}), which no database can store",
            field=field,
        )
