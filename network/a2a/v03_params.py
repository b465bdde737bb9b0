"""A 0.3 JSON-RPC call's params, read as the SDK's 0.3 adapter will, refused as invalid params.

The SDK answers 0.3's methods (`message/send`, `tasks/get`...) with its 0.3 adapter, which
validates the call with pydantic and converts it to 1.0's protobuf types before this
server's handler sees it. What fails there answered a stranger with the wrong error:

- params that are no valid 0.3 params (a part of an unknown `kind`, a data part's `data`
  that is no object, `tasks/get` without `id`): -32600 Invalid Request, its `data` pydantic's
  whole report;
- a value the conversion cannot carry (a lone surrogate in any string, key or value; a number
  past a double's range in a data part or metadata; a `historyLength` past 32 bits):
  -32603 Internal error, its message Python's exception text.

Each is invalid params (-32602), as 1.0's calls are answered, naming the field (its path in
the call, `params.message.parts.0.text`): `refused_0_3` finds them before the SDK reads the
body, by the SDK's own validation and conversion.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3.jsonrpc_adapter import JSONRPC03Adapter
from pydantic import ValidationError

from network.utf8 import lone_surrogate_at

INVALID_PARAMS = -32602
MAX_PATH = 200  # the longest field path a message shows
SHOWN_PROBLEMS = 3  # the validation problems a message names (the count of the rest after)
CONVERSIONS: dict[str, Callable[[Any], Any]] = {
    "message/send": conversions.to_core_send_message_request,
    "message/stream": conversions.to_core_send_message_request,
    "tasks/get": conversions.to_core_get_task_request,
    "tasks/cancel": conversions.to_core_cancel_task_request,
    "tasks/resubscribe": conversions.to_core_subscribe_to_task_request,
    "tasks/pushNotificationConfig/set": (
        conversions.to_core_create_task_push_notification_config_request
    ),
    "tasks/pushNotificationConfig/get": (
        conversions.to_core_get_task_push_notification_config_request
    ),
    "tasks/pushNotificationConfig/list": (
        conversions.to_core_list_task_push_notification_config_request
    ),
    "tasks/pushNotificationConfig/delete": (
        conversions.to_core_delete_task_push_notification_config_request
    ),
    "agent/getAuthenticatedExtendedCard": conversions.to_core_get_extended_agent_card_request,
}


def refused_0_3(body: bytes) -> dict[str, Any] | None:
    """The 0.3 JSON-RPC error response refusing `body` (a call of a 0.3 method whose params
    the SDK's adapter would refuse as above), or None: the SDK answers it."""
    try:
        call = json.loads(body)
    except ValueError:
        return None
    if not isinstance(call, dict):
        return None
    method = call.get("method")
    if not isinstance(method, str) or method not in JSONRPC03Adapter.METHOD_TO_MODEL:
        return None
    model = JSONRPC03Adapter.METHOD_TO_MODEL[method]
    try:
        request = model.model_validate(call)  # type: ignore[attr-defined]
    except ValidationError as exc:
        problem = _invalid(exc, call)
    else:
        problem = _unconvertible(method, request, call.get("params"))
    if problem is None:
        return None
    request_id = call.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        request_id = None
    error = {"code": INVALID_PARAMS, "message": problem, "data": None}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _invalid(exc: ValidationError, call: dict[str, Any]) -> str | None:
    """What is wrong with the params, naming each field; None when the call itself (its
    `jsonrpc`, `id` or `method`) is what is wrong: the SDK answers -32600, as it should."""
    errors = exc.errors(include_url=False)
    if not errors or any(not error["loc"] or error["loc"][0] != "params" for error in errors):
        return None
    shown = [
        f"{'.'.join(str(p) for p in loc)}: {error['msg']}" for loc, error in _meant(errors, call)
    ]
    more = len(shown) - SHOWN_PROBLEMS
    tail = f" (and {more} more)" if more > 0 else ""
    return f"invalid params: {'; '.join(shown[:SHOWN_PROBLEMS])}{tail}"


def _meant(errors: list[Any], call: dict[str, Any]) -> list[tuple[tuple[Any, ...], Any]]:
    """`errors` with their locations, those of a part (a union: pydantic tries each kind of
    part and reports each) kept to the kind the part names (`"kind": "data"`: `DataPart`'s),
    so the message says what is wrong with the part sent, not why it is no other kind; a
    `kind` no member has is said once."""
    kept: list[tuple[tuple[Any, ...], Any]] = []
    named: set[tuple[Any, ...]] = set()
    for error in errors:
        loc = tuple(error["loc"])
        member = next(
            (i for i, p in enumerate(loc) if isinstance(p, str) and p.endswith("Part")), None
        )
        if member is None:
            kept.append((loc, error))
            continue
        part = _at(call, loc[:member])
        kind = part.get("kind") if isinstance(part, dict) else None
        if isinstance(kind, str) and loc[member].lower() == f"{kind.lower()}part":
            kept.append((loc[:member] + loc[member + 1 :], error))
        elif kind not in ("text", "file", "data") and loc[:member] not in named:
            named.add(loc[:member])
            kept.append(((*loc[:member], "kind"), {"msg": _no_kind(kind)}))
    return kept or [(tuple(error["loc"]), error) for error in errors]


def _no_kind(kind: Any) -> str:
    if kind is None:
        return "a part needs a kind: text, file or data"
    shown = repr(kind) if len(repr(kind)) <= MAX_PATH else f"{repr(kind)[:MAX_PATH]}..."
    return f"{shown} is no kind of part (text, file or data)"


def _at(value: Any, loc: tuple[Any, ...]) -> Any:
    """What `loc` (a validation error's location) finds in the parsed call, or None."""
    for step in loc:
        if isinstance(value, dict) and isinstance(step, str):
            value = value.get(step)
        elif isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
            value = value[step]
        else:
            return None
    return value


def _unconvertible(method: str, request: Any, params: Any) -> str | None:
    """Why the SDK's conversion of `request` to 1.0's types would fail (naming the field of
    `params` that holds the value), or None when it converts."""
    try:
        CONVERSIONS[method](request)
    except Exception:
        return _culprit(params)
    return None


def _culprit(params: Any) -> str:
    """The first value of `params` no conversion carries, named by its path."""
    stack: list[tuple[str, Any]] = [("params", params)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            at = lone_surrogate_at(value)
            if at is not None:
                return (
                    f"{_shown(path)} holds a lone surrogate at position {at}, which is not valid "
                    "UTF-8 text"
                )
        elif isinstance(value, int) and not isinstance(value, bool):
            if abs(value) >= 2**31 and path.endswith("historyLength"):
                return f"{_shown(path)} is out of range: it must be below 2**31"
            try:
                float(value)
            except OverflowError:
                return f"{_shown(path)} is a number past a double's range"
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                if lone_surrogate_at(key) is not None:
                    shown = key.encode("utf-8", "backslashreplace").decode("ascii", "replace")
                    return f"{_shown(path)} has a key holding a lone surrogate ({_shown(shown)})"
                stack.append((f"{path}.{key}", item))
        elif isinstance(value, list):
            stack.extend(
                (f"{path}.{index}", item) for index, item in reversed(list(enumerate(value)))
            )
    return "params hold a value out of its field's range"


def _shown(path: str) -> str:
    """`path`, cut when long (a key may be as long as the body)."""
    return path if len(path) <= MAX_PATH else f"{path[: MAX_PATH - 3]}..."
