"""State schema: the declared type and merge handler of each key.

A schema is given either Haystack-style, `{key: {"type": T, "handler": fn}}`, or as a pydantic
model class whose fields give the types (a merge handler may ride in `Annotated[...]`
metadata, LangGraph-style). Validators are built once per key, when the schema is built, never
on a write. Keys the schema does not declare are untyped replace keys, unless the schema is
closed (`closed=True`, or a pydantic model with `extra="forbid"`), where writing them is an error.

Decisions where the peers are silent: a pydantic model's field defaults seed every new state,
except a default of None: such a key starts absent, so `kv.has(key)` says whether anything was
written (the README's `if not ctx.kv.has("plan")` router) while `kv.get(key)` still gives None.
A required field without a default simply starts absent. A model's `@field_validator`s run on
every write of their key (before, after, wrap and plain modes, in the model's order). A model
with `@model_validator`s is refused: they judge the whole model, and a state is written one key
at a time.
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

from network.errors import ConfigurationError, StateError, StateValidationError
from network.state.handlers import merge_dicts, merge_lists, replace_values
from network.state.scopes import is_persistent, json_pointer
from network.state.storable import (
    Check,
    ints_in_range,
    mentions_int,
    storable_check,
)
from network.state.texts import may_hold_text, texts_have_utf8, utf8_text_type
from network.state.typenames import type_name
from network.state.values import copy_value, is_pydantic_model_class
from network.utf8 import has_utf8_form

if TYPE_CHECKING:
    from pydantic import BaseModel, TypeAdapter, ValidationError

# pydantic is imported when the first typed key is compiled (`build_spec`), not with `network`.


def validation_error() -> type[ValidationError]:
    """pydantic's `ValidationError`; loaded wherever a key has an adapter to raise it."""
    error: type[ValidationError] = sys.modules["pydantic_core"].ValidationError
    return error


Handler = Callable[[Any, Any], Any]

_JSON_NATIVE = (str, int, float, bool, type(None))


def _is_list_type(tp: Any) -> bool:
    if get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp is list or get_origin(tp) is list


def _is_dict_type(tp: Any) -> bool:
    return tp is dict or get_origin(tp) is dict


def _is_json_native(tp: Any) -> bool:
    """True when values of `tp` are already JSON (no models, dates, sets, ...)."""
    if tp is Any or tp in _JSON_NATIVE or tp is list or tp is dict:
        return True
    origin = get_origin(tp)
    if origin in (list, dict, typing.Union, types.UnionType):
        return all(_is_json_native(arg) for arg in get_args(tp))
    return origin is typing.Literal


def _validates_fresh(tp: Any, depth: int = 0) -> bool:
    """True when validating a value of `tp` builds every container anew (no `Any` part
    can hand the caller's object back), so the store need not copy what validation returns."""
    if depth > 8 or tp is Any or tp is list or tp is dict:
        return False
    if tp in _JSON_NATIVE:
        return True
    origin = get_origin(tp)
    if origin is typing.Literal:
        return True
    if origin in (list, dict, typing.Union, types.UnionType):
        return all(_validates_fresh(arg, depth + 1) for arg in get_args(tp))
    if is_pydantic_model_class(tp):
        return all(
            _validates_fresh(field.annotation, depth + 1) for field in tp.model_fields.values()
        )
    return False


def _looks_like_type(tp: Any) -> bool:
    return isinstance(tp, type) or tp is Any or get_origin(tp) is not None


def _bare_generic(tp: Any) -> Any:
    """`typing.List`, `typing.Dict`, ... without parameters as the class they stand for
    (`list`, `dict`, ...): as `list` is a list key (merged with `merge_lists`, as Haystack
    merges `List`), and its name reads back (`dict`, where `typing.Dict` was named `dict[]`)."""
    origin = get_origin(tp)
    if isinstance(origin, type) and not get_args(tp) and tp is not origin:
        return origin
    return tp


@dataclass(slots=True, eq=False)
class KeySpec:
    """Everything the store needs to write one key, prepared once."""

    key: str
    type: Any
    handler: Handler
    declared: bool
    adapter: TypeAdapter[Any] | None  # None: untyped, nothing to validate
    item_adapter: TypeAdapter[Any] | None = None  # list[X]: an appended item's JSON form
    items_validator: Any = None  # list[X]: validates the appended items alone, in one call
    value_adapter: TypeAdapter[Any] | None = None  # dict[str, X]: validates merged entries alone
    entry_adapter: TypeAdapter[Any] | None = None  # X of dict[str, X]: one entry's JSON form
    list_items: bool = False  # merge_lists may validate only the new items
    dict_entries: bool = False  # merge_dicts may validate only the new entries
    json_native: bool = True
    fresh: bool = False  # validation returns new objects all the way down (see _validates_fresh)
    persistent: bool = True
    pointer: str = ""
    append_path: str = ""  # pointer + "/-": where merge_lists appends
    type_label: str = field(default="Any")
    # Refuses a value state cannot hold (see network.state.storable); None when the key's
    # type already guarantees JSON, so typed keys pay nothing.
    check: Check | None = None
    # How writes of two parallel branches to this key resolve when its handler replaces:
    # "first", "last", or `fn(current, new) -> merged` (see `network.run.join`); None: conflict.
    conflict: Any = None

    def validate(self, value: Any) -> Any:
        """The validated (and coerced) value, or `StateValidationError` naming key and type."""
        if self.adapter is None:
            return value
        try:
            return self.adapter.validate_python(value)
        except validation_error() as exc:
            raise self._error(exc) from exc

    def validate_items(self, items: list[Any]) -> list[Any]:
        """Validate items about to be appended to a `list[X]` key."""
        if self.items_validator is None:
            return items
        try:
            return self.items_validator.validate_python(items)  # type: ignore[no-any-return]
        except validation_error() as exc:
            raise self.items_error(exc) from exc

    def items_error(self, exc: ValidationError) -> StateValidationError:
        """The error of appended items pydantic refused (`exc`), naming key and type."""
        return self._error(exc, skip=1)  # the index among new items means nothing

    def validate_entries(self, entries: Mapping[Any, Any]) -> dict[Any, Any]:
        """Validate entries about to be merged into a `dict[K, V]` key."""
        if self.value_adapter is None:
            return dict(entries)
        try:
            validated: dict[Any, Any] = self.value_adapter.validate_python(entries)
            return validated
        except validation_error() as exc:
            raise self._error(exc) from exc

    def to_json(self, value: Any) -> Any:
        """The JSON form of a stored value (what deltas and snapshots carry)."""
        if self.json_native or self.adapter is None:
            return value
        return self.adapter.dump_python(value, mode="json")

    def item_json(self, item: Any) -> Any:
        """The JSON form of one item of a `list[X]` key (an appended item's op value)."""
        if self.json_native or self.item_adapter is None:
            return copy_value(item)
        return self.item_adapter.dump_python(item, mode="json")

    def entry_json(self, entry: Any) -> Any:
        """The JSON form of one entry of a `dict[K, X]` key (a merged entry's op value)."""
        if self.json_native or self.entry_adapter is None:
            return copy_value(entry)
        return self.entry_adapter.dump_python(entry, mode="json")

    def json_copy(self, value: Any) -> Any:
        """A JSON form of `value` that shares nothing with it (what an op may keep)."""
        if self.json_native or self.adapter is None:
            return copy_value(value)
        return self.adapter.dump_python(value, mode="json")

    def _error(self, exc: ValidationError, skip: int = 0) -> StateValidationError:
        detail = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in detail.get("loc", ())[skip:])
        if not where.isascii():  # a dict key with a lone surrogate: escaped, so the message
            where = where.encode("utf-8", "backslashreplace").decode()  # itself can be logged
        suffix = f" at {where}" if where else ""
        message = detail["msg"]
        if detail["type"] == "string_unicode":  # `texts.utf8_text_type`'s refusal, said plainly
            message = "text with a lone surrogate, which has no UTF-8 form"
        return StateValidationError(
            f"state key {self.key!r} expects {self.type_label}: {message}{suffix}",
            key=self.key,
            expected=self.type_label,
        )


# The conversation's names on a run's result (`result["messages"]`, `result["last_message"]`):
# a key of either name would be hidden behind them. Haystack's State keeps its conversation in
# a `messages` key; here it is `state.messages`, and a key may not take the name.
CONVERSATION_NAMES = frozenset({"messages", "last_message"})


def conversation_name_message(key: str) -> str:
    """Why `key` (one of `CONVERSATION_NAMES`) cannot be a state key, and what to do instead."""
    return (
        f"state key {key!r} is the conversation's name: the conversation is state.messages "
        f"(result[{key!r}] in a run's result), never a key; give the key another name"
    )


def _takes_current_and_new(handler: Callable[..., Any]) -> bool:
    """Whether `handler(current, new)` binds (True when Python cannot tell: a builtin)."""
    try:
        inspect.signature(handler).bind(None, None)
    except TypeError:
        return False
    except ValueError:  # no signature to read
        return True
    return True


def build_spec(key: str, tp: Any, handler: Handler | None, *, declared: bool = True) -> KeySpec:
    """Prepare a key's validators; a type pydantic cannot validate is a ConfigurationError, and
    so is a key named for the conversation (`CONVERSATION_NAMES`)."""
    if not isinstance(key, str) or not key:
        raise ConfigurationError(f"state keys must be non-empty strings, got {key!r}")
    if key in CONVERSATION_NAMES:
        raise ConfigurationError(conversation_name_message(key))
    if not storable_key(key):  # as an undeclared key is (`check_key_form`), at the schema
        raise ConfigurationError(unstorable_key_message(key))
    if handler is not None and not callable(handler):
        raise ConfigurationError(f"state key {key!r}: handler {handler!r} is not callable")
    if handler is not None and not _takes_current_and_new(handler):
        # else every write failed with a TypeError naming no key (a tool's: the model read it)
        raise ConfigurationError(
            f"state key {key!r}: handler {getattr(handler, '__name__', handler)!r} cannot be "
            "called as handler(current, new); a handler is fn(current, new) -> merged"
        )
    if not _looks_like_type(tp):
        raise ConfigurationError(f"state key {key!r}: {tp!r} is not a type")
    tp = _bare_generic(tp)
    if handler is None:
        handler = merge_lists if _is_list_type(tp) else replace_values
    untyped = tp is Any
    adapter = None if untyped else _typed_adapter(key, tp)
    json_native = _is_json_native(tp)
    spec = KeySpec(
        key=key,
        type=tp,
        handler=handler,
        declared=declared,
        adapter=adapter,
        json_native=json_native,
        fresh=_validates_fresh(tp),
        persistent=is_persistent(key),
        pointer=json_pointer(key),
        append_path=json_pointer(key) + "/-",
        type_label=type_name(tp),
        # a JSON-native type with an `Any` part (`list`, `dict[str, Any]`) stores its value
        # as its own JSON form: that part must be plain JSON, as an untyped key's value is
        check=storable_check(key, tp, adapter, plain=json_native),
    )
    # Appending to a list[X] (or merging into a dict[K, V]) keeps the stored value valid when
    # the new part is valid; Annotated constraints such as a max length break that, so a key
    # with metadata is validated whole.
    if untyped or tp is list:
        spec.list_items = True
    elif get_origin(tp) is list:
        spec.list_items = True
        spec.item_adapter = _adapter(get_args(tp)[0])
        # The core validator itself: TypeAdapter.validate_python adds a Python call per write.
        spec.items_validator = _adapter(list[get_args(tp)[0]]).validator  # type: ignore[misc]
    if untyped or tp is dict:
        spec.dict_entries = True
    elif get_origin(tp) is dict:
        spec.dict_entries = True
        spec.value_adapter = _adapter(tp)
        entry_args = get_args(tp)
        spec.entry_adapter = _adapter(entry_args[1]) if len(entry_args) == 2 else None
    return spec


def _adapter(tp: Any) -> TypeAdapter[Any]:
    """The adapter of a key's type, or of its items or entries.

    It gives `bytes` a JSON form for every value: base64 text (URL-safe alphabet, padded),
    read back from text as base64 (either alphabet). pydantic's default, UTF-8, has no form
    for bytes that are not UTF-8 text, and would fail the state's JSON form (snapshots,
    deltas, threads) in the middle of a watched run. It refuses NaN and infinity in a float,
    which JSON has no form for either, and an int past a double's range (`MAX_INT`). A
    pydantic model (as the type, or inside it) keeps its own configuration (see
    `network.state.storable`)."""
    # pydantic is loaded by the first typed key, not by `import network`.
    from pydantic import (  # noqa: PLC0415 (see above)
        AfterValidator,
        ConfigDict,
        PydanticUserError,
        TypeAdapter,
    )

    if may_hold_text(tp):  # no lone surrogate, which no store can keep (`network.state.texts`)
        rebuilt = utf8_text_type(tp)  # checked in pydantic's core: no Python call per write
        tp = rebuilt if rebuilt is not None else Annotated[tp, AfterValidator(texts_have_utf8)]
    if mentions_int(tp):
        tp = Annotated[tp, AfterValidator(ints_in_range)]

    try:
        # `ser_json_inf_nan="constants"`: a NaN an `Any` part (`object`, `dict`, `list[Any]`)
        # let through stays NaN in the JSON form the storable check reads, which refuses it;
        # pydantic's default writes it as null there, so the check saw null and passed it.
        config = ConfigDict(
            ser_json_bytes="base64",
            val_json_bytes="base64",
            allow_inf_nan=False,
            ser_json_inf_nan="constants",
        )
        return TypeAdapter(tp, config=config)
    except PydanticUserError as exc:  # a type with a configuration of its own (a model)
        if exc.code != "type-adapter-config-unused":
            raise
        return TypeAdapter(tp)


def _typed_adapter(key: str, tp: Any) -> TypeAdapter[Any]:
    """The adapter of a typed key; a type pydantic cannot validate is a ConfigurationError."""
    from pydantic.errors import (  # noqa: PLC0415 (as in _adapter)
        PydanticSchemaGenerationError,
        PydanticUserError,
    )

    try:
        return _adapter(tp)
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        raise ConfigurationError(f"state key {key!r}: cannot validate type {tp!r}: {exc}") from exc


CONFLICT_RULES = ("first", "last")


def _conflict_rule(key: str, rule: Any) -> Any:
    """A schema entry's `conflict`: None, "first", "last" or a `fn(current, new)`."""
    if rule is None or rule in CONFLICT_RULES or callable(rule):
        return rule
    raise ConfigurationError(
        f"state key {key!r}: conflict must be 'first', 'last' or a function "
        f"fn(current, new), got {rule!r}"
    )


def _is_handler(metadata: Any) -> bool:
    """A merge handler in `Annotated` metadata: a plain callable, not a pydantic validator."""
    if not callable(metadata) or isinstance(metadata, type):
        return False
    from pydantic import functional_validators as fv  # noqa: PLC0415 (schema compile time only)

    validators = (fv.AfterValidator, fv.BeforeValidator, fv.PlainValidator, fv.WrapValidator)
    return not isinstance(metadata, validators)


def field_validators(model: type[BaseModel], field_name: str) -> list[Any]:
    """The model's `@field_validator`s of `field_name`, as `Annotated` validators."""
    from pydantic import functional_validators as fv  # noqa: PLC0415 (schema compile time only)

    kinds = {
        "after": fv.AfterValidator,
        "before": fv.BeforeValidator,
        "plain": fv.PlainValidator,
        "wrap": fv.WrapValidator,
    }
    found: list[Any] = []
    for decorator in model.__pydantic_decorators__.field_validators.values():
        fields = decorator.info.fields
        if field_name in fields or "*" in fields:
            found.append(kinds[decorator.info.mode](decorator.func))
    return found


def check_key_form(key: Any) -> str:
    """`key` when it can be a state key whatever the schema: a non-empty string, not a name of
    the conversation (`CONVERSATION_NAMES`), with no NUL and no lone surrogate; else a
    `StateError` naming it.

    A thread store keeps the key as text: PostgreSQL refuses NUL, and no driver can encode a
    lone surrogate; refused before a run starts, not at the commit after the model was paid.
    """
    if not isinstance(key, str) or not key:
        raise StateError(f"state keys must be non-empty strings, got {key!r}", key=str(key))
    if key in CONVERSATION_NAMES:
        raise StateError(conversation_name_message(key), key=key)
    if not storable_key(key):
        raise StateError(unstorable_key_message(key), key=key)
    return key


def storable_key(key: str) -> bool:
    """Whether a thread store can keep `key` as text: no NUL (PostgreSQL refuses it), no lone
    surrogate (no driver can encode it)."""
    return "\x00" not in key and (key.isascii() or has_utf8_form(key))


def unstorable_key_message(key: str) -> str:
    """Why `key` (not `storable_key`) cannot be a state key."""
    return f"state key {key!r} holds NUL or a lone surrogate, which a thread store cannot keep"


def mapped_key_problem(key: str) -> str | None:
    """Why a non-empty `key` named in a mapping (a tool's `inputs_from_state` /
    `outputs_to_state`, a sub-run's `state_in` / `state_out`) can never be read or written as
    a state key, or None: one of the conversation's names, or text no thread store can keep.
    Such a mapping would fail at every call, or read nothing and fall back to a default."""
    if key in CONVERSATION_NAMES:
        return conversation_name_message(key)
    if not storable_key(key):
        return unstorable_key_message(key)
    return None


def untyped_spec(key: str) -> KeySpec:
    """The spec of a key the schema does not declare: no type, replace handler."""
    return build_spec(key, Any, replace_values, declared=False)


# The fields a dict schema entry may have, and where a starting value goes instead.
_ENTRY_FIELDS = ("type", "handler", "conflict")
_WHERE_DEFAULTS_GO = (
    ". A starting value goes in the run's state (`network.run(..., state={key: value})`), or "
    "in a pydantic model schema's field default (`class S(BaseModel): key: int = 0`), which "
    "seeds every new state"
)


class StateSchema:
    """The compiled schema of a state: one `KeySpec` per declared key.

    Build it from a Haystack-style dict or a pydantic model class; `closed=True` refuses keys
    it does not declare.
    """

    __slots__ = ("_specs", "closed", "defaults", "model", "source")

    def __init__(
        self,
        schema: Mapping[str, Mapping[str, Any]] | type[BaseModel] | None = None,
        *,
        closed: bool | None = None,
    ) -> None:
        if closed is not None and not isinstance(closed, bool):  # `closed="no"` is truthy
            raise ConfigurationError(f"StateSchema: closed must be True or False, got {closed!r}")
        self._specs: dict[str, KeySpec] = {}
        self.defaults: dict[str, Any] = {}
        self.model: type[BaseModel] | None = None
        self.source = schema
        if schema is None:
            self.closed = bool(closed)
        elif is_pydantic_model_class(schema):
            self.model = schema
            self.closed = (
                closed if closed is not None else schema.model_config.get("extra") == "forbid"
            )
            self._from_model(schema)
        elif isinstance(schema, Mapping):
            self.closed = bool(closed)
            self._from_dict(schema)
        else:
            raise ConfigurationError(
                f"a state schema is a dict of key specs or a pydantic model class, got {schema!r}"
            )

    @classmethod
    def coerce(cls, schema: Any) -> StateSchema:
        """Accept a ready `StateSchema`, a dict, a pydantic model class or None."""
        return schema if isinstance(schema, StateSchema) else cls(schema)

    def _from_dict(self, schema: Mapping[str, Mapping[str, Any]]) -> None:
        for key, entry in schema.items():
            if not isinstance(entry, Mapping):
                raise ConfigurationError(
                    f"state key {key!r}: expected {{'type': ..., 'handler': ...}}, got {entry!r}"
                )
            if "type" not in entry:
                raise ConfigurationError(f"state key {key!r}: the schema entry has no 'type'")
            unknown = set(entry) - set(_ENTRY_FIELDS)
            if unknown:
                raise ConfigurationError(
                    f"state key {key!r}: unknown schema fields {sorted(unknown)}; a schema "
                    f"entry has {', '.join(map(repr, _ENTRY_FIELDS))}"
                    + (_WHERE_DEFAULTS_GO if unknown & {"default", "default_factory"} else "")
                )
            spec = build_spec(key, entry["type"], entry.get("handler"))
            spec.conflict = _conflict_rule(key, entry.get("conflict"))
            self._specs[key] = spec

    def _from_model(self, model: type[BaseModel]) -> None:
        decorators = model.__pydantic_decorators__
        if decorators.model_validators:
            names = ", ".join(decorators.model_validators)
            raise ConfigurationError(
                f"state schema {model.__name__}: its model validators ({names}) cannot run on "
                "a state, which is written one key at a time; use @field_validator on the "
                "fields, or check across keys in the tool or router that writes them"
            )
        for key, info in model.model_fields.items():
            name = info.alias or key
            handlers = [m for m in info.metadata if _is_handler(m)]
            constraints = [m for m in info.metadata if m not in handlers]
            constraints += field_validators(model, key)
            if len(handlers) > 1:
                raise ConfigurationError(f"state key {name!r}: more than one merge handler")
            tp = info.annotation if not constraints else Annotated[info.annotation, *constraints]
            self._specs[name] = build_spec(name, tp, handlers[0] if handlers else None)
            if not info.is_required():
                default = info.get_default(call_default_factory=True)
                if default is not None:
                    self.defaults[name] = default

    def with_keys(self, specs: Mapping[str, KeySpec]) -> StateSchema:
        """A copy of this schema that declares `specs` too (this one is left as it is: one
        schema object may serve several networks). Keys it declares already are kept."""
        copy = StateSchema.__new__(StateSchema)
        copy._specs = {**specs, **self._specs}
        copy.defaults = dict(self.defaults)
        copy.model = self.model
        copy.source = self.source
        copy.closed = self.closed
        return copy

    def spec(self, key: str) -> KeySpec | None:
        """The declared spec of `key`, or None when the schema does not declare it."""
        return self._specs.get(key)

    def require(self, key: str) -> KeySpec:
        """The spec for writing `key`: declared, or untyped when the schema is open."""
        spec = self._specs.get(key)
        if spec is not None:
            return spec
        if self.closed:
            raise StateError(
                f"state key {key!r} is not declared and the schema is closed "
                f"(declared: {', '.join(sorted(self._specs)) or 'none'})",
                key=key,
            )
        return untyped_spec(check_key_form(key))

    @property
    def keys(self) -> list[str]:
        """The declared keys."""
        return list(self._specs)

    def items(self) -> list[tuple[str, KeySpec]]:
        """The declared keys with their specs."""
        return list(self._specs.items())

    def __contains__(self, key: object) -> bool:
        return key in self._specs

    def same_as(self, other: StateSchema) -> bool:
        """Whether `other` declares the same keys with the same types and handlers.

        Compares handlers as objects, so schemas whose handler is a lambda (which has no JSON
        form) compare too.
        """
        if self.closed != other.closed or self.model is not other.model:
            return False
        if self._specs.keys() != other._specs.keys():
            return False
        return all(
            spec.type_label == theirs.type_label and spec.handler is theirs.handler
            for spec, theirs in ((spec, other._specs[key]) for key, spec in self._specs.items())
        )

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}: {s.type_label}" for k, s in self._specs.items())
        return f"StateSchema({fields}{', closed' if self.closed else ''})"


__all__ = [
    "Handler",
    "KeySpec",
    "StateSchema",
    "build_spec",
    "merge_dicts",
    "merge_lists",
    "replace_values",
    "untyped_spec",
]
