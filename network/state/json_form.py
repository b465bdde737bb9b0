"""State to JSON and back: schema (types by name, handlers by import path), data, results,
messages.

`temp:` keys are never written. A handler that cannot be imported back by name (a lambda, a
function defined inside another) cannot be serialized: that is an error naming the key, never
a silent loss of the merge behaviour.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Annotated, Any, Literal, NamedTuple, get_args, get_origin

from network.errors import StateError
from network.history.messages import message_list_adapter
from network.history.results import InferenceResult
from network.state.handlers import merge_dicts, merge_lists, replace_values
from network.state.schema import StateSchema, build_spec
from network.state.typenames import parse_type, type_name
from network.state.values import is_pydantic_model

FORMAT = "agent-network/state@1"


def handler_path(handler: Any, key: str) -> str:
    """The import path of a merge handler (`module:qualname`)."""
    module = getattr(handler, "__module__", None)
    qualname = getattr(handler, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        raise StateError(
            f"state key {key!r}: handler {handler!r} has no import path (a lambda or a local "
            "function cannot be serialized; define it at module level)",
            key=key,
        )
    return f"{module}:{qualname}"


def import_path(path: str) -> Any:
    """The object a `module:qualname` path names."""
    module_name, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


_READY = {f"{h.__module__}:{h.__qualname__}": h for h in (merge_lists, merge_dicts, replace_values)}
# Before the state layer was a package the handlers lived in `network.handlers`; state JSON
# written then (thread stores keep it) names them by that path and must still load.
_READY.update(
    {f"network.handlers:{h.__qualname__}": h for h in (merge_lists, merge_dicts, replace_values)}
)


def schema_to_dict(schema: StateSchema) -> dict[str, Any]:
    """The schema as JSON-ready data."""
    model = schema.model
    fields = model.model_fields if model is not None else {}
    keys = {
        key: {
            # a model's own field is rebuilt from the model: its name is only said
            "type": spec.type_label if key in fields else _type_path(spec.type, key),
            "handler": handler_path(spec.handler, key),
        }
        for key, spec in schema.items()
    }
    out: dict[str, Any] = {"closed": schema.closed, "keys": keys}
    if model is not None:
        if "<" in model.__qualname__:
            raise StateError(
                f"state schema {model.__qualname__}: a local class cannot be serialized (it "
                "has no import path); define it at module level"
            )
        out["model"] = f"{model.__module__}:{model.__qualname__}"
    return out


def _type_path(tp: Any, key: str) -> str:
    """`type_name(tp)`, once it names everything `tp` checks: never a silent loss of the key's
    validation, as for a handler (`handler_path`). `Annotated` metadata (`Field(ge=0)`, an
    `AfterValidator`) has no name, and a local class no import path."""
    for part in _parts(tp, 0):
        if get_origin(part) is Annotated:
            raise StateError(
                f"state key {key!r}: its type {type_name(tp)} carries Annotated metadata "
                f"({', '.join(map(repr, part.__metadata__))}), which a type's name cannot keep; "
                "declare the schema as a pydantic model (rebuilt from its class) to serialize it",
                key=key,
            )
        if isinstance(part, type) and "<" in part.__qualname__:
            raise StateError(
                f"state key {key!r}: its type {part.__qualname__} is a local class, which has "
                "no import path; define it at module level",
                key=key,
            )
    return type_name(tp)


def _parts(tp: Any, depth: int) -> list[Any]:
    """`tp` and every type inside it (arguments, a model's field types)."""
    if depth > 10:
        return []
    found = [tp]
    if get_origin(tp) is Annotated:
        found += _parts(get_args(tp)[0], depth + 1)
    elif get_origin(tp) is not Literal:
        for arg in get_args(tp):
            found += _parts(arg, depth + 1)
    return found


def schema_from_dict(data: dict[str, Any]) -> StateSchema:
    """The schema `schema_to_dict` wrote.

    A pydantic model's schema is rebuilt from the model; keys it declares beyond the model's
    fields (a typed `output_key`, see `network.state.output_keys`) are read from `keys`."""
    if "model" in data:
        try:
            model = import_path(data["model"])
        except (ImportError, AttributeError, TypeError, ValueError) as exc:
            raise StateError(
                f"state schema {data['model']!r} cannot be imported ({type(exc).__name__})"
            ) from exc
        schema = StateSchema(model, closed=data.get("closed"))
        extra = _entries({k: v for k, v in data.get("keys", {}).items() if k not in schema})
        specs = {key: build_spec(key, e["type"], e.get("handler")) for key, e in extra.items()}
        return schema.with_keys(specs) if specs else schema
    return StateSchema(_entries(data.get("keys", {})), closed=bool(data.get("closed")))


def _entries(keys: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Schema entries (`{"type", "handler"}`, as objects) from their JSON form."""
    entries: dict[str, dict[str, Any]] = {}
    for key, entry in keys.items():
        if not isinstance(entry, dict) or "type" not in entry:
            raise StateError(f"state key {key!r}: a schema entry needs a 'type'", key=key)
        try:
            read = parse_type(entry["type"])
        except (ValueError, TypeError, ImportError, AttributeError) as exc:
            raise StateError(
                f"state key {key!r}: its type {entry['type']!r} cannot be read back ({exc})",
                key=key,
            ) from exc
        spec: dict[str, Any] = {"type": read}
        path = entry.get("handler")  # absent: the default for the type, as in code
        if path is not None:
            spec["handler"] = _READY.get(path) or _imported_handler(path, key)
        entries[key] = spec
    return entries


def _imported_handler(path: Any, key: str) -> Any:
    """The merge handler `path` names, or a `StateError` naming the key and the path."""
    try:
        return import_path(path)
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        raise StateError(
            f"state key {key!r}: handler {path!r} cannot be imported ({type(exc).__name__})",
            key=key,
        ) from exc


class StateParts(NamedTuple):
    """What a State is made of, as its JSON form holds it (`State.from_json` builds one)."""

    data: dict[str, Any]
    schema: StateSchema
    results: list[InferenceResult]
    messages: list[Any]


def state_to_dict(
    schema: StateSchema,
    data: dict[str, Any],
    results: Sequence[InferenceResult],
    messages: Sequence[Any],
) -> dict[str, Any]:
    """A state's parts as JSON-ready data (`data` is its snapshot: no `temp:` keys)."""
    return {
        "format": FORMAT,
        "schema": schema_to_dict(schema),
        "data": data,
        "results": [result.to_dict(mode="json") for result in results],
        "messages": message_list_adapter().dump_python(list(messages), mode="json"),
    }


def json_default(value: Any) -> Any:
    """`json.dumps`'s `default`: what a state's data may hold besides JSON types. An untyped
    key may hold a pydantic model instance (its writes were checked to have a JSON form,
    `network.state.storable`); it is written as that form, and reads back as it (a dict)."""
    if is_pydantic_model(value):
        return value.model_dump(mode="json")
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_PARTS = {"schema": dict, "data": dict, "results": list, "messages": list}


def state_from_dict(data: dict[str, Any]) -> StateParts:
    """The parts `state_to_dict` wrote (messages as written: the State checks them).

    JSON that is not such an object, or misses one of its parts or holds one of the wrong
    kind, is a `StateError` naming the part (it was an AttributeError or KeyError)."""
    if not isinstance(data, dict):
        raise StateError(f"not a serialized state (a JSON {type(data).__name__}, not an object)")
    if data.get("format") != FORMAT:
        raise StateError(f"not a serialized state (format {data.get('format')!r})")
    for part, kind in _PARTS.items():
        if not isinstance(data.get(part), kind):
            found = "missing" if part not in data else f"a {type(data[part]).__name__}"
            raise StateError(
                f"not a serialized state: its {part!r} must be a JSON "
                f"{'object' if kind is dict else 'array'}, found {found}"
            )
    return StateParts(
        data["data"],
        schema_from_dict(data["schema"]),
        [InferenceResult.from_dict(result) for result in data["results"]],
        data["messages"],
    )
