"""A dataclass record as JSON data, field by field: the `to_dict` of the library's reports.

Each field in the order the class declares it, named in camelCase (`recorded_agent` becomes
`recordedAgent`), its value as JSON data: a list or a tuple becomes a new list, a mapping a new
dict (of converted values), a value with a `to_dict` method what that returns, anything else
is kept as it is. A report whose JSON form is exactly its fields writes `to_dict` once, here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def json_fields(record: DataclassInstance) -> dict[str, Any]:
    """`record`'s fields as JSON data, camelCase names (see the module docstring)."""
    return {camel(field.name): json_value(getattr(record, field.name)) for field in fields(record)}


def camel(name: str) -> str:
    """A snake_case name in camelCase: `still_failing` becomes `stillFailing`."""
    first, *rest = name.split("_")
    return first + "".join(part.capitalize() for part in rest)


def json_value(value: Any) -> Any:
    """`value` as JSON data (see the module docstring)."""
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    if isinstance(value, Mapping):
        return {key: json_value(item) for key, item in value.items()}
    to_dict = getattr(value, "to_dict", None)
    return value if to_dict is None else to_dict()
