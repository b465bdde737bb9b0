"""A tool's arguments refuse NaN and infinity, wherever a number may sit.

A model's JSON may carry `NaN` or `Infinity` (Python's `json.loads` reads both, and `1e999`
as infinity), and so may an approver's edited arguments; a tool should never run with one.
The arguments' core schema is rewritten once, when the tool is defined:

- every `float` and `Decimal` (top level, in a list or dict, in a nested model that has a
  configuration of its own) is told `allow_inf_nan=False`: pydantic refuses them itself, at
  no cost per call;
- every `Any` part (an untyped `dict` or `list`, `dict[str, Any]`, a model's `Any` field),
  which pydantic takes as it comes, is checked by a walk of that part alone: the one place
  a call pays anything, and only tools with such parameters do.

Either way the refusal is a validation error at the argument's location, so the tool's
`ToolError` names the tool and the argument as for any other invalid argument.
"""

from __future__ import annotations

import math
from typing import Any

# Keys of a core schema whose values are data or machinery, never schemas: left as they are
# (a default value shaped like `{"type": "any"}` must not be rewritten).
_NOT_SCHEMAS = frozenset(
    {
        "default",
        "metadata",
        "serialization",
        "expected",
        "cls",
        "function",
        "config",
        "ref",
        "custom_error_context",
    }
)


def arguments_schema(core: Any) -> tuple[Any, Any, bool]:
    """(schema, config, fields) to build the arguments' validator from: the arguments model's
    core schema `core` rewritten (above). `fields` is True when the schema validates the
    model's fields alone into `(values, extra, fields set)`: no model instance is built and
    discarded per call, the model's own definitions (a recursive argument model) kept beside.
    Otherwise (a shape not foreseen) it validates into the model instance."""
    if core.get("type") == "model" and core["schema"].get("type") == "model-fields":
        return finite_schema(core["schema"]), core.get("config"), True
    if core.get("type") == "definitions":
        top = core["schema"]
        if top.get("type") == "model" and top["schema"].get("type") == "model-fields":
            schema = {
                "type": "definitions",
                "schema": finite_schema(top["schema"]),
                "definitions": finite_schema(core["definitions"]),
            }
            return schema, top.get("config"), True
    return finite_schema(core), None, False


def finite_schema(schema: Any) -> Any:
    """A copy of the core schema `schema` whose numbers refuse NaN and infinity (above).

    The copy shares everything it does not change; the model's own schema is left as it is.
    A nested model or dataclass is validated by its own prebuilt validator (pydantic-core
    reuses a complete class's, whatever the schema says), so its values are walked after."""
    if isinstance(schema, list):
        return [finite_schema(item) for item in schema]
    if isinstance(schema, tuple):
        return tuple(finite_schema(item) for item in schema)
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if _of_anything(schema):
        # an untyped container: one walk of the whole, not a call per item (a dict's keys,
        # strings in JSON, are not looked at)
        return _walked(schema)
    if kind == "any":
        walked = _walked(None)
        if "ref" in schema:
            walked["ref"] = schema["ref"]
        return walked
    copy = {
        key: value if key in _NOT_SCHEMAS else finite_schema(value) for key, value in schema.items()
    }
    if kind in ("float", "decimal") and "allow_inf_nan" not in schema:
        copy["allow_inf_nan"] = False
    if kind in ("model", "dataclass"):
        # a definition is found by its `ref`, which moves to the wrapper
        ref = copy.pop("ref", None)
        walked = _walked(copy)
        if ref is not None:
            walked["ref"] = ref
        return walked
    return copy


def _of_anything(schema: dict[str, Any]) -> bool:
    """Whether `schema` is a list, set or dict (no constraint on its length) of anything."""
    kind = schema.get("type")
    if kind in ("list", "set", "frozenset"):
        items = schema.get("items_schema")
    elif kind == "dict":
        items = schema.get("values_schema")
    else:
        return False
    return items is None or items == {"type": "any"}


def _walked(schema: Any) -> Any:
    """`schema` (None: anything) followed by the walk refusing non-finite numbers."""
    from pydantic_core import core_schema  # noqa: PLC0415 (a tool's definition loads pydantic)

    if schema is None:
        return core_schema.no_info_plain_validator_function(_refuse_non_finite)
    return core_schema.no_info_after_validator_function(_refuse_non_finite, schema)


# Leaves the walk never looks into.
_PLAIN = frozenset({str, int, bool, type(None), bytes})


def _refuse_non_finite(value: Any) -> Any:
    """`value` itself, unless it holds NaN or infinity (in containers, models' fields)."""
    if type(value) in _PLAIN:
        return value
    found = first_non_finite(value)
    if found is not None:
        where, number = found
        raise _non_finite(number, "".join(f"[{key!r}]" for key in where))
    return value


def first_non_finite(value: Any) -> tuple[list[Any], float] | None:
    """(the keys and indexes leading to it, the number) of a NaN or infinity in `value` (in
    lists, tuples, sets and dicts, models' and dataclasses' fields), or None when it holds
    none. Iterative, so a value nested deeply ends in no RecursionError; the path is worked
    out only once a number is found."""
    # JSON's dicts and lists first, on a fast loop; anything else, or more containers than
    # JSON arguments hold (a value holding itself, from Python), goes to the careful walk
    stack = [value]
    budget = _FAST_CONTAINERS
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is float:
            if item - item != 0.0:  # NaN or infinity: x - x is NaN for both
                return _path_to(value, item), item
        elif kind is dict or kind is list:
            budget -= 1
            if budget < 0:
                return _careful(value)
            stack.extend(item.values() if kind is dict else item)
        elif kind not in _PLAIN:
            return _careful(value)
    return None


_FAST_CONTAINERS = 10_000


def _careful(value: Any) -> tuple[list[Any], float] | None:
    """`first_non_finite` for any value: each container looked into once, so a value
    holding itself ends too; models, dataclasses, sets and float subclasses looked at."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _PLAIN:
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return _path_to(value, item), item
        elif id(item) not in seen:
            seen.add(id(item))
            stack.extend(v for _, v in _entries(item))
    return None


def _path_to(value: Any, number: float) -> list[Any]:
    """The keys and indexes leading to `number` (found in `value`)."""
    stack: list[tuple[Any, list[Any]]] = [(value, [])]
    seen: set[int] = set()
    while stack:
        item, where = stack.pop()
        if item is number:
            return where
        if type(item) not in _PLAIN and id(item) not in seen:
            seen.add(id(item))
            stack.extend((v, [*where, k]) for k, v in _entries(item))
    return []


def _entries(value: Any) -> Any:
    """(key or index, item) of what `value` holds: a dict's, a list's, a tuple's or a set's
    items, a pydantic model's or a dataclass's fields; nothing for anything else."""
    kind = type(value)
    if kind is dict:
        return value.items()
    if kind is list or kind is tuple or kind is set or kind is frozenset:
        return enumerate(value)
    if hasattr(kind, "__pydantic_fields__"):
        extra = getattr(value, "__pydantic_extra__", None) or {}
        return [*value.__dict__.items(), *extra.items()]
    if hasattr(kind, "__dataclass_fields__"):
        return [(name, getattr(value, name, None)) for name in kind.__dataclass_fields__]
    return ()


def _non_finite(number: float, where: str) -> Exception:
    from pydantic_core import PydanticCustomError  # noqa: PLC0415 (loaded by the definition)

    at = f" at {where}" if where else ""
    return PydanticCustomError(
        "finite_number",
        "Input should be a finite number, got {number}{at}",
        {"number": str(number), "at": at},
    )
