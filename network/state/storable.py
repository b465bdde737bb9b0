"""What a state key may hold: data that survives a trip through JSON.

State is streamed to clients, persisted in thread stores and copied between runs, so a value
that cannot become JSON (a lock, a client, a socket, a function) breaks all three, and it used
to break them late: the stream died while serializing, far from the code that wrote it. Each
write is checked when it happens instead, and refused with `UnstorableValueError` naming the
key and the spot inside the value.

The rules (decisions where the peers are silent):

- A key whose declared type is JSON-safe all the way down (str, int, float, bool, None,
  bytes, Literal, dates, UUIDs, enums, pydantic models of such fields, and lists, tuples, sets
  and dicts of them) needs no check: its validator already made the value storable. Such keys
  pay nothing for this module.
- NaN and infinity have no JSON form (a client's `JSON.parse` and PostgreSQL's `jsonb` refuse
  them), so a key's validator refuses them in a declared `float` (or `list[float]`, ...) with
  a `StateValidationError` (`network.state.schema`). A pydantic model's own configuration
  governs its fields: unless it sets `allow_inf_nan=False`, a model with a float field is
  checked on each write, and a value holding NaN or infinity is refused naming where.
- An untyped value, or the `Any` part of a typed one, must be plain JSON: str, bool, None,
  an int within `MAX_INT` (a typed key's validator bounds its ints the same way), a finite
  float, lists and tuples of plain JSON, dicts with str keys, and pydantic model instances
  (stored through their JSON form). What you store is what you read back after a
  thread reload, so a `set`, `bytes`, NaN or infinity, a dataclass or any other object is
  refused: declare the key's type (`set[str]`, `bytes`, `datetime`...) to store such a value.
  A tuple and a model instance are accepted as what JSON makes of them: after a reload they
  read back as a list and a dict (a declared type reads them back as they were written).
- A declared type whose values are their own JSON form (`list`, `dict`, `list[Any]`,
  `dict[str, Any]`, `list | None`: JSON types with an `Any` part) is checked as an untyped
  value is: that part must be plain JSON. Any other declared type (a model with an `Any`
  field, an arbitrary class) is checked by serializing the value through the type's own JSON
  serializer.
- `bytes` in a key's type has a JSON form for every value: base64 text (URL-safe alphabet,
  padded), which the key reads back as bytes (`network.state.schema`). A
  pydantic model inside a value serializes its bytes as its own configuration says: with
  pydantic's default (UTF-8), bytes that are not UTF-8 text have no JSON form, so such a
  model's writes are checked and that value refused; give the model `ser_json_bytes="base64"`
  and `val_json_bytes="base64"` to store any bytes.

Live objects belong beside the state, not in it: `network.run(..., deps=...)` for one object
the whole run shares, `resources={name: factory}` for things opened and closed per run.
"""

from __future__ import annotations

import enum
import math
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

from network.errors import UnstorableValueError
from network.state.texts import text_problem
from network.state.values import is_pydantic_model, is_pydantic_model_class

if TYPE_CHECKING:
    from pydantic import TypeAdapter

Check = Callable[[Any], None]

_PLAIN_LEAVES = frozenset({str, bool, type(None)})  # and ints within `MAX_INT`
_NO_TEXT_LEAVES = frozenset({bool, type(None)})  # plain, with no text to check
_TEXT = "text with a lone surrogate"  # how `text_problem` starts
MAX_INT = 2**1024
"""An integer in state is smaller than this in magnitude: the range of a double, which is how
JavaScript's `JSON.parse` (an AG-UI client) and most JSON readers hold a number. A larger one
would reach a client as infinity, and one of more than 4300 digits could not even be written
as JSON by Python (`sys.get_int_max_str_digits`). Store such numbers as strings."""
_BIG_INT = "number too large for JSON"
_SAFE_LEAF_TYPES = (str, int, float, bool, type(None), bytes, enum.Enum)
# Types pydantic turns into JSON strings, named rather than imported: `import network` stays
# light, and a subclass counts through its MRO.
_SAFE_LEAF_NAMES = frozenset(
    {
        ("datetime", "datetime"),
        ("datetime", "date"),
        ("datetime", "time"),
        ("datetime", "timedelta"),
        ("uuid", "UUID"),
        ("decimal", "Decimal"),
        ("pathlib", "PurePath"),
    }
)
_SAFE_CONTAINERS = (list, dict, tuple, set, frozenset, typing.Union, types.UnionType)
MAX_DEPTH = 100
"""How deep a state value may nest (lists, tuples and dicts in one another, a model's fields).

A thread store keeps a value inside the JSON of the agent call that wrote it (its state
delta, a few levels down), and pydantic reads JSON back only up to 200 levels: a value much
deeper would be written, then unreadable by any process that loads the thread from the store.
So the limit is checked at `kv.set`, with room under pydantic's for what wraps the value.
It also stops a list that contains itself."""
_MAX_DEPTH = MAX_DEPTH - 1  # the outermost container is at depth 0
_TOO_DEEP = "value nested too deeply"

WHERE_LIVE_OBJECTS_GO = (
    "state holds JSON data only (it is streamed, persisted and copied). Pass live objects "
    "(clients, locks, sockets, sandboxes) beside it: `network.run(..., deps=...)` or "
    "`resources={...}`"
)


def is_json_safe_type(
    tp: Any, depth: int = 0, *, bytes_safe: bool = True, float_safe: bool = True
) -> bool:
    """True when every value of `tp`, once validated, serializes to JSON (nothing to check).

    `bytes_safe`: whether `bytes` here has a JSON form for every value: a key's adapter gives
    it one (base64, `network.state.schema`); inside a pydantic model the
    model's configuration decides, and pydantic's default (UTF-8) has none for bytes that are
    not UTF-8 text, so such a value is checked on its write. `float_safe`: whether a float
    here is refused when not finite (a key's adapter refuses them; a model, unless its
    configuration says `allow_inf_nan=False`, accepts them)."""
    if depth > 10:
        return False
    if get_origin(tp) is Annotated:
        return is_json_safe_type(
            get_args(tp)[0], depth + 1, bytes_safe=bytes_safe, float_safe=float_safe
        )
    if tp is Any or tp is object or tp in (list, dict, tuple, set, frozenset):
        return False
    if isinstance(tp, type):
        if issubclass(tp, bytes):
            return bytes_safe
        if issubclass(tp, float):
            return float_safe
        if issubclass(tp, _SAFE_LEAF_TYPES) or any(
            (base.__module__, base.__qualname__) in _SAFE_LEAF_NAMES for base in tp.__mro__
        ):
            return True
        if is_pydantic_model_class(tp):
            config = tp.model_config
            if config.get("arbitrary_types_allowed"):
                return False
            own = config.get("ser_json_bytes", "utf8") != "utf8" and config.get(
                "val_json_bytes", "utf8"
            ) == config.get("ser_json_bytes")
            finite = config.get("allow_inf_nan") is False
            return all(
                is_json_safe_type(field.annotation, depth + 1, bytes_safe=own, float_safe=finite)
                for field in tp.model_fields.values()
            )
        return False
    origin = get_origin(tp)
    if origin is typing.Literal:
        return True
    if origin in _SAFE_CONTAINERS:
        return all(
            arg is Ellipsis
            or is_json_safe_type(arg, depth + 1, bytes_safe=bytes_safe, float_safe=float_safe)
            for arg in get_args(tp)
        )
    return False


def storable_check(
    key: str, tp: Any, adapter: TypeAdapter[Any] | None, *, plain: bool = False
) -> Check | None:
    """The check a write to `key` of type `tp` needs: None when its type already ensures it.

    `plain`: values of `tp` are stored as their own JSON form (`list`, `dict[str, Any]`, ...:
    no serializer runs between the store and a snapshot, a delta or a thread), so what its
    `Any` parts hold must be plain JSON, as an untyped key's value. Serializing such a value
    through the type would pass a set, bytes or an int dict key, which then stayed in the
    state's JSON form and broke it (`to_json`, the stream, the thread's commit)."""
    if adapter is None:
        return lambda value: check_plain_json(key, value)
    if is_json_safe_type(tp):
        return None
    if plain:
        return lambda value: check_plain_json(key, value)
    # pydantic is loaded already: `adapter` is one of its TypeAdapters.
    from pydantic_core import PydanticSerializationError  # noqa: PLC0415 (see above)

    # A model keeps its own configuration, which writes NaN in an `Any` field as null in the
    # JSON form read below: such values are walked for non-finite floats themselves.
    walk_floats = mentions_model(tp)

    def through_type(value: Any) -> None:
        if walk_floats:
            non_finite = _non_finite_at(value, 0)
            if non_finite is not None:
                raise _non_finite_error(key, non_finite)
        try:
            # warnings off: a merge handler's input (one appended item, some entries) is not
            # of the key's type, and pydantic then serializes it by what it finds.
            dumped = adapter.dump_python(value, mode="json", warnings=False)
        except (PydanticSerializationError, ValueError, TypeError, RecursionError) as exc:
            raise UnstorableValueError(
                f"state key {key!r} cannot store this value: {exc}. {WHERE_LIVE_OBJECTS_GO}",
                key=key,
                found=_found(value),
            ) from exc
        problem = _first_problem(dumped, 0)  # the JSON form: NaN, or nested too deep
        if problem is not None:
            path, found = problem
            if found == _TOO_DEEP:
                raise _too_deep(key)
            at = f" at {''.join(reversed(path))}" if path else ""
            raise UnstorableValueError(
                f"state key {key!r} cannot store a {found}{at}: JSON has no form for it",
                key=key,
                found=found,
            )

    return through_type


def _non_finite_error(key: str, found: tuple[list[str], float]) -> UnstorableValueError:
    where, number = found
    at = f" at {''.join(reversed(where))}" if where else ""
    return UnstorableValueError(
        f"state key {key!r} cannot store a non-finite float ({number}){at}: JSON has no form "
        "for it",
        key=key,
        found=f"non-finite float ({number})",
    )


def _non_finite_at(value: Any, depth: int) -> tuple[list[str], float] | None:
    """(the path from the leaf up, the float) of the first NaN or infinity in `value`, looking
    inside containers and pydantic models' fields, or None."""
    kind = type(value)
    if kind is float:
        return None if math.isfinite(value) else ([], value)
    if depth > _MAX_DEPTH:
        return None  # the JSON form's check tells a value nested too deep
    if kind is dict:
        items: Any = value.items()
    elif kind in _COLLECTIONS:
        items = enumerate(value)
    elif is_pydantic_model(value):
        items = value.__dict__.items()
    else:
        return None
    for name, item in items:
        if type(item) in _PLAIN_LEAVES or type(item) is int:
            continue
        found = _non_finite_at(item, depth + 1)
        if found is not None:
            found[0].append(f"[{name!r}]")
            return found
    return None


def mentions_model(tp: Any, depth: int = 0) -> bool:
    """Whether values of `tp` may hold a pydantic model instance."""
    if is_pydantic_model_class(tp):
        return True
    if depth > 10 or isinstance(tp, str):
        return False
    return any(mentions_model(arg, depth + 1) for arg in get_args(tp))


def _too_deep(key: str) -> UnstorableValueError:
    return UnstorableValueError(
        f"state key {key!r} holds a value nested more than {MAX_DEPTH} levels deep (or one "
        "that contains itself): a thread store could not read it back. Flatten it, or store "
        "it as a string of your own format.",
        key=key,
        found=_TOO_DEEP,
    )


def check_plain_json(key: str, value: Any) -> None:
    """Raise `UnstorableValueError` unless `value` is plain JSON (see the module docstring)."""
    kind = type(value)
    if (kind in _PLAIN_LEAVES and (kind is not str or value.isascii())) or (
        kind is int and -MAX_INT < value < MAX_INT
    ):
        return
    problem = _first_problem(value, 0)
    if problem is not None:
        path, found = problem
        if found == _TOO_DEEP:
            raise _too_deep(key)
        at = f" at {''.join(reversed(path))}" if path else ""
        hint = (
            "store it as a string"
            if found.startswith(_BIG_INT)
            else "no store or client can keep it"
            if _TEXT in found
            else f"{WHERE_LIVE_OBJECTS_GO}; to store a set, bytes or a date, declare the key's "
            "type in the state schema"
        )
        raise UnstorableValueError(
            f"state key {key!r} cannot store a {found}{at}: {hint}.", key=key, found=found
        )


class _NotPlain(Exception):
    """Internal: `plain_json_copy` met something that is not plain JSON."""


def plain_json_copy(key: str, value: Any) -> Any:
    """A private copy of `value`, checked to be plain JSON in the same walk (an untyped
    write would otherwise walk it twice: once to check, once to copy)."""
    try:
        return _copy_plain(value, 0)
    except _NotPlain:
        check_plain_json(key, value)  # walks again, only to say where and what
        raise AssertionError("unreachable: check_plain_json raises") from None


def _copy_plain(value: Any, depth: int) -> Any:
    # `plain` leaves are taken as they are, inline, where a str is ASCII (one flag test);
    # other text comes here, to be checked for a lone surrogate (`network.state.texts`)
    kind = type(value)
    plain = _NO_TEXT_LEAVES
    if kind in plain:
        return value
    if kind is str:
        if text_problem(value) is None:
            return value
        raise _NotPlain
    if kind is int:
        if -MAX_INT < value < MAX_INT:
            return value
        raise _NotPlain
    if depth > _MAX_DEPTH:
        raise _NotPlain
    if kind is dict:
        out = {}
        for name, item in value.items():
            if type(name) is not str or not (name.isascii() or text_problem(name) is None):
                raise _NotPlain
            out[name] = (
                item
                if type(item) in plain or (type(item) is str and item.isascii())
                else _copy_plain(item, depth + 1)
            )
        return out
    if kind is list:
        return [
            item
            if type(item) in plain or (type(item) is str and item.isascii())
            else _copy_plain(item, depth + 1)
            for item in value
        ]
    if kind is float:
        if math.isfinite(value):
            return value
        raise _NotPlain
    if kind is tuple:
        return tuple(_copy_plain(item, depth + 1) for item in value)
    if is_pydantic_model(value):
        if _first_problem(value, depth) is not None:
            raise _NotPlain
        return value.model_copy(deep=True)
    raise _NotPlain


def _first_problem(value: Any, depth: int) -> tuple[list[str], str] | None:
    """(path from the offender up, its type name) of the first part of `value` that is not
    plain JSON, or None. The path is built only on the way back from a failure: the common
    case, a valid value, walks it once without formatting anything."""
    kind = type(value)
    if kind is float:
        return None if math.isfinite(value) else ([], f"non-finite float ({value})")
    if kind is int:
        return None if -MAX_INT < value < MAX_INT else ([], f"{_BIG_INT} ({_digits(value)})")
    if kind is str:
        wrong = text_problem(value)
        return None if wrong is None else ([], wrong)
    if depth > _MAX_DEPTH:
        return ([], _TOO_DEEP)
    plain = _NO_TEXT_LEAVES
    if kind is list or kind is tuple or kind is dict:
        keyed = kind is dict
        # a part's place is `[key]`, the repr of its index or key ([0], ['name'])
        for name, item in value.items() if keyed else enumerate(value):
            if keyed and type(name) is not str:
                return ([f"[{name!r}]"], f"dict key of type {type(name).__name__}")
            if keyed and (bad_name := text_problem(str(name))) is not None:
                return ([f"[{name!r}]"], f"dict key holding {bad_name}")
            if type(item) not in plain:
                problem = _first_problem(item, depth + 1)
                if problem is not None:
                    problem[0].append(f"[{name!r}]")
                    return problem
        return None
    if kind in plain:
        return None
    if is_pydantic_model(value):
        found = _non_finite_at(value, depth)  # its JSON form may have made NaN null
        if found is not None:
            return (found[0], f"non-finite float ({found[1]})")
        try:
            dumped = value.model_dump(mode="json")
        except (ValueError, TypeError, RecursionError):  # PydanticSerializationError: ValueError
            return ([], f"{kind.__name__} model whose fields cannot become JSON")
        return _first_problem(dumped, depth)
    return ([], _found(value))


def _digits(value: int) -> str:
    """How long `value` is, said without converting it to text (which may be refused)."""
    return f"about {int(abs(value).bit_length() * 0.30103) + 1} digits"


def mentions_int(tp: Any, depth: int = 0) -> bool:
    """Whether values of `tp` may hold an `int` (so a key's validator bounds them, `MAX_INT`)."""
    if tp is int:
        return True
    if depth > 10 or tp is Any or isinstance(tp, str):
        return False
    if is_pydantic_model_class(tp):
        return any(mentions_int(f.annotation, depth + 1) for f in tp.model_fields.values())
    return any(mentions_int(arg, depth + 1) for arg in get_args(tp))


def ints_in_range(value: Any, depth: int = 0) -> Any:
    """`value` itself, once every int in it (in containers, model fields) is within `MAX_INT`;
    else a `ValueError` (a key's validator turns it into `StateValidationError`)."""
    kind = type(value)
    if kind is int:
        if not -MAX_INT < value < MAX_INT:
            # a custom error: pydantic words a plain ValueError as "Value error, ..."; (only
            # a typed key's validator calls this: pydantic is loaded, its import costs nothing)
            from pydantic_core import PydanticCustomError  # noqa: PLC0415

            raise PydanticCustomError(
                "int_too_large", f"{_BIG_INT} ({_digits(value)}): store it as a string"
            )
    elif depth <= _MAX_DEPTH:
        if kind is dict:
            for name, item in value.items():
                ints_in_range(name, depth + 1)
                ints_in_range(item, depth + 1)
        elif kind in _COLLECTIONS:
            if _numbers_within(value):  # the common case, a list of ints: no walk in Python
                return value
            for item in value:
                ints_in_range(item, depth + 1)
        elif is_pydantic_model(value):
            for item in value.__dict__.values():
                ints_in_range(item, depth + 1)
    return value


_COLLECTIONS = frozenset({list, tuple, set, frozenset})


def _numbers_within(items: Any) -> bool:
    """Whether `items` are numbers within `MAX_INT`, told by their least and greatest (found
    in C: a typed `list[int]` write is not walked item by item). False also when they are not
    all numbers, or when NaN makes the comparison say nothing: then the caller walks them."""
    try:
        return not items or (min(items) > -MAX_INT and max(items) < MAX_INT)
    except TypeError:  # not comparable with each other or with a number
        return False


def _found(value: Any) -> str:
    kind = type(value)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"
