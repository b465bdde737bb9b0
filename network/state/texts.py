"""Text in state has a UTF-8 form: no lone surrogate, in a value or in a dict key.

A Python `str` may hold half of a surrogate pair on its own (`os.fsdecode` of a file name that
is not UTF-8, `json.loads` of `"\\ud800"`): every thread store, database driver and client
encodes text as UTF-8, which has no form for it. Such text used to be stored, then refused
with the whole run by the thread's commit at the run's end, far from the write. Each write
is checked instead (a decision where the peers are silent; `network.utf8` finds the
character):

- an untyped value, or the `Any` part of a JSON-native one, in the plain-JSON walk of
  `network.state.storable` (`text_problem`), refused with `UnstorableValueError`;
- a typed key whose type may hold text (`may_hold_text`) in its validator
  (`texts_have_utf8`), refused with `StateValidationError` naming key and type.

ASCII text (the common case) costs one flag test (`str.isascii`); a list of texts, one join.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, get_args, get_origin

from network.state.values import is_pydantic_model, is_pydantic_model_class
from network.utf8 import lone_surrogate_at

_MAX_DEPTH = 99  # as `network.state.storable`: deeper values are refused there
_CONTAINERS = frozenset({list, tuple, set, frozenset})


def text_problem(text: str) -> str | None:
    """What is wrong with `text` as state text (a lone surrogate, where), or None."""
    if text.isascii():
        return None
    at = lone_surrogate_at(text)
    if at is None:
        return None
    return f"text with a lone surrogate ({text[at]!r}, character {at}) with no UTF-8 form"


def may_hold_text(tp: Any, depth: int = 0) -> bool:
    """Whether values of `tp` may hold a `str` a caller wrote: `str`, `Any`, a bare
    container, a pydantic model with such a field, or a generic of such (a `Literal`'s and
    an enum's texts come from code)."""
    if tp is str or tp is Any or tp is object or tp in (list, dict, tuple, set, frozenset):
        return True
    if depth > 10 or isinstance(tp, str) or get_origin(tp) is typing.Literal:
        return False
    if is_pydantic_model_class(tp):
        return any(may_hold_text(f.annotation, depth + 1) for f in tp.model_fields.values())
    return any(may_hold_text(arg, depth + 1) for arg in get_args(tp))


_UTF8_STR: Any = None  # `str` whose validation reads its UTF-8 form, built on first use
_PLAIN_SCALARS = (int, float, bool, bytes, type(None))
_REBUILT = {list: list, dict: dict, set: set, frozenset: frozenset, tuple: tuple}


def utf8_text_type(tp: Any, depth: int = 0) -> Any:
    """`tp` with each `str` in it made a string pydantic's core reads as UTF-8 (a `pattern`
    constraint), which refuses a lone surrogate in its own code, with no Python call per
    write; None when `tp` holds something else that may hold text (`Any`, a model, a class),
    which `texts_have_utf8` checks instead."""
    global _UTF8_STR
    if tp is str:
        if _UTF8_STR is None:
            from pydantic import StringConstraints  # noqa: PLC0415 (a typed key loaded it)

            _UTF8_STR = Annotated[str, StringConstraints(pattern="^")]
        return _UTF8_STR
    if tp in _PLAIN_SCALARS or get_origin(tp) is typing.Literal:
        return tp
    origin = get_origin(tp)
    if depth > 10 or origin is None:
        return None
    args = get_args(tp)
    rebuilt = [a if a is Ellipsis else utf8_text_type(a, depth + 1) for a in args]
    if any(a is None for a in rebuilt):
        return None
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(rebuilt)]  # noqa: UP007 (built from a tuple of types)
    if origin in _REBUILT:
        return _REBUILT[origin][tuple(rebuilt)]  # type: ignore[index]
    return None


def texts_have_utf8(value: Any, depth: int = 0) -> Any:
    """`value` itself, once every text in it (values and dict keys, in containers and model
    fields) has a UTF-8 form; else a pydantic custom error, which a key's validator turns
    into a `StateValidationError` naming the key."""
    kind = type(value)
    if kind is list:  # a list of ASCII texts (a `list[str]` append), told in C: no walk
        try:
            if "".join(value).isascii():
                return value
        except TypeError:  # not all of it is text: walked below
            pass
    if kind is str:
        if not value.isascii():
            problem = text_problem(value)
            if problem is not None:
                # only a typed key's validator calls this: pydantic is loaded already
                from pydantic_core import PydanticCustomError  # noqa: PLC0415

                raise PydanticCustomError("lone_surrogate", problem)
    elif depth <= _MAX_DEPTH:
        if kind is dict:
            for name, item in value.items():
                texts_have_utf8(name, depth + 1)
                texts_have_utf8(item, depth + 1)
        elif kind in _CONTAINERS:
            for item in value:
                if type(item) is not str or not item.isascii():
                    texts_have_utf8(item, depth + 1)
        elif is_pydantic_model(value):
            for item in value.__dict__.values():
                texts_have_utf8(item, depth + 1)
    return value
