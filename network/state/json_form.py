"""State to JSON and back: schema (types by name, handlers by import path), data, results,
messages.

`temp:` keys are never written. A handler that cannot be imported back by name (a lambda, a
function defined inside another) cannot be serialized: that is an error naming the key, never
a silent loss of the merge behaviour.
"""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING, Any

from network.errors import StateError
from network.history.messages import message_list_adapter
from network.state.handlers import merge_dicts, merge_lists, replace_values
from network.state.schema import StateSchema
from network.state.typenames import parse_type

if TYPE_CHECKING:
    from network.state.state import State

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
    keys = {
        key: {"type": spec.type_label, "handler": handler_path(spec.handler, key)}
        for key, spec in schema.items()
    }
    out: dict[str, Any] = {"closed": schema.closed, "keys": keys}
    if schema.model is not None:
        out["model"] = f"{schema.model.__module__}:{schema.model.__qualname__}"
    return out


def schema_from_dict(data: dict[str, Any]) -> StateSchema:
    """The schema `schema_to_dict` wrote."""
    if "model" in data:
        return StateSchema(import_path(data["model"]), closed=data.get("closed"))
    entries = {}
    for key, entry in data.get("keys", {}).items():
        path = entry["handler"]
        entries[key] = {
            "type": parse_type(entry["type"]),
            "handler": _READY.get(path) or import_path(path),
        }
    return StateSchema(entries, closed=bool(data.get("closed")))


def state_to_dict(state: State) -> dict[str, Any]:
    """The whole state as JSON-ready data (no `temp:` keys)."""
    return {
        "format": FORMAT,
        "schema": schema_to_dict(state.schema),
        "data": state.snapshot(),
        "results": [result.to_dict(mode="json") for result in state.results],
        "messages": message_list_adapter().dump_python(list(state.messages), mode="json"),
    }


def state_from_dict(data: dict[str, Any]) -> State:
    """The State `state_to_dict` wrote."""
    from network.history.results import InferenceResult
    from network.state.state import State

    if data.get("format") != FORMAT:
        raise StateError(f"not a serialized state (format {data.get('format')!r})")
    return State(
        data["data"],
        schema=schema_from_dict(data["schema"]),
        results=[InferenceResult.from_dict(result) for result in data["results"]],
        messages=data["messages"],  # State checks them (dicts become messages)
    )


def state_to_json(state: State) -> str:
    """The state as a JSON string."""
    return json.dumps(state_to_dict(state))


def state_from_json(text: str) -> State:
    """The State `state_to_json` wrote."""
    return state_from_dict(json.loads(text))
