"""Types written as names and read back, so a schema can travel through JSON.

Builtins and `typing` constructs are written as Python spells them (`list[str]`,
`dict[str, int] | None`, `tuple[int, ...]`); any other class as its import path
(`package.module:Qualname`), a generic one with its arguments (`collections.abc:Sequence[str]`,
a generic pydantic model `app.models:Page[int]`). Reading a name back only imports modules,
looks names up and subscripts the generic classes it names: it never evaluates code.
"""

from __future__ import annotations

import builtins
import importlib
import re
import types
import typing
from collections.abc import Callable
from typing import Any, get_args, get_origin

_BUILTIN_NAMES = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "bytes": bytes,
    "None": type(None),
    "NoneType": type(None),
    "list": list,
    "dict": dict,
    "set": set,
    "frozenset": frozenset,
    "tuple": tuple,
    "Any": Any,
}
_GENERIC_ORIGINS = {"list": list, "dict": dict, "set": set, "frozenset": frozenset, "tuple": tuple}


def type_name(tp: Any) -> str:
    """A readable, parseable name for `tp`."""
    if tp is Any:
        return "Any"
    if tp is type(None):
        return "None"
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in get_args(tp))
    if origin is typing.Literal:
        return "Literal[" + ", ".join(repr(arg) for arg in get_args(tp)) + "]"
    if origin is typing.Annotated:
        return type_name(get_args(tp)[0])
    if tp is Ellipsis:  # `tuple[int, ...]`
        return "..."
    if origin is not None:
        if not get_args(tp):  # `typing.List` without parameters: `list`, not `list[]`
            return type_name(origin)
        args = ", ".join(type_name(arg) for arg in get_args(tp))
        return f"{type_name(origin)}[{args}]"
    if isinstance(tp, type):
        if tp.__module__ == "builtins":
            return tp.__name__
        return f"{tp.__module__}:{tp.__qualname__}"
    return repr(tp)


_TOKEN = re.compile(r"\s*([A-Za-z_][\w.:]*|'[^']*'|\"[^\"]*\"|-?\d+|\.\.\.|[\[\],|])")


def parse_type(name: str) -> Any:
    """The type a `type_name` string names. Raises ValueError for anything else."""
    tokens = [t for t in _TOKEN.findall(name) if t]
    if "".join(tokens) != re.sub(r"\s+", "", name):
        raise ValueError(f"cannot read type name {name!r}")
    parser = _Parser(tokens)
    tp = parser.union()
    if parser.pos != len(tokens) or tp is Ellipsis:
        raise ValueError(f"cannot read type name {name!r}")
    return tp


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise ValueError(f"expected {expected or 'a name'} in type name")
        self.pos += 1
        return token

    def separated(self, part: Callable[[], Any], separator: str) -> list[Any]:
        """One `part` or more, `separator` between them."""
        parts = [part()]
        while self.peek() == separator:
            self.take(separator)
            parts.append(part())
        return parts

    def bracketed(self, part: Callable[[], Any]) -> list[Any]:
        """`[part, part, ...]`: one part or more."""
        self.take("[")
        parts = self.separated(part, ",")
        self.take("]")
        return parts

    def union(self) -> Any:
        members = self.separated(self.single, "|")
        if len(members) == 1:
            return members[0]
        if Ellipsis in members:
            raise ValueError("... in a union")
        return typing.Union[tuple(members)]  # noqa: UP007 - built from a runtime tuple

    def single(self) -> Any:
        name = self.take()
        if name == "Literal":
            return typing.Literal[tuple(self.bracketed(self.literal))]
        if name == "...":  # only as `tuple[X, ...]`: subscripting checks where it stands
            return Ellipsis
        base = _lookup(name)
        if self.peek() != "[":
            return base
        args = self.bracketed(self.union)
        origin: Any = _GENERIC_ORIGINS.get(name)
        if origin is None and isinstance(base, type) and hasattr(base, "__class_getitem__"):
            origin = base  # `collections.abc:Sequence[str]`, a generic pydantic model `m:Page[int]`
        if origin is None:
            raise ValueError(f"{name} takes no type arguments")
        variadic = origin is tuple and len(args) == 2 and args[0] is not Ellipsis
        if Ellipsis in args and not variadic:
            raise ValueError("... stands only in tuple[X, ...]")
        try:
            return origin[tuple(args)] if len(args) > 1 else origin[args[0]]
        except TypeError as exc:  # a class that is not generic, or not with these arguments
            raise ValueError(f"{name}: {exc}") from exc

    def literal(self) -> Any:
        token = self.take()
        if token[0] in "'\"":
            return token[1:-1]
        if token in ("True", "False"):
            return token == "True"
        if token == "None":
            return None
        return int(token)


def _lookup(name: str) -> Any:
    if name in _BUILTIN_NAMES:
        return _BUILTIN_NAMES[name]
    if ":" in name:
        module_name, _, qualname = name.partition(":")
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj
    if hasattr(builtins, name) and isinstance(getattr(builtins, name), type):
        return getattr(builtins, name)
    raise ValueError(f"unknown type {name!r}")
