"""Requests the SDK would answer with an internal error, or not at all: refused before it
reads them, with the error HTTP, JSON-RPC and A2A name.

- a body that is not UTF-8 (a stray `FF` byte): the SDK answered a JSON-RPC call -32603 with
  Python's "'utf-8' codec can't decode byte ...", and a REST request 500. It is 400
  `invalid_json` in the serving layer's shape, naming the byte's offset, as a body nested too
  deep is (`check_utf8`, for both bindings);

The rest concern JSON-RPC calls (`refused_call`):

- an `id` holding a lone surrogate (`"id": "\\ud800"`: JSON may spell one, `json.loads`
  keeps it): every answer repeats the id, and no UTF-8 answer can hold it, so the SDK's
  failed as it was encoded: a 500 with no JSON-RPC body (1.0) or a connection dropped (0.3),
  the server logging "Exception in ASGI application". It is an Invalid Request (-32600),
  answered with `id` null, as JSON-RPC answers a call whose id it cannot read;
- a 0.3 method (`tasks/get`...) under an `A2A-Version` header naming another version (`1.0`):
  the SDK's 0.3 adapter answered -32603 (0.3 has no code for it). It is
  `VersionNotSupportedError` (-32009), naming the header and the method's 1.0 name.
"""

from __future__ import annotations

import json
from typing import Any

from a2a.compat.v0_3.jsonrpc_adapter import JSONRPC03Adapter
from a2a.utils.constants import PROTOCOL_VERSION_0_3, VERSION_HEADER

from network.serving.errors import RequestError
from network.utf8 import lone_surrogate_at

INVALID_REQUEST = -32600
VERSION_NOT_SUPPORTED = -32009
HEADER = VERSION_HEADER.lower()
NAMES_1_0 = {
    "message/send": "SendMessage",
    "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask",
    "tasks/cancel": "CancelTask",
    "tasks/resubscribe": "SubscribeToTask",
    "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
    "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
    "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
}


def refused_call(body: bytes, headers: Any) -> dict[str, Any] | None:
    """The JSON-RPC error response refusing `body` (UTF-8; sent with `headers`, a Starlette
    request's) for one of the reasons above, or None: the SDK answers it."""
    try:
        call = json.loads(body)
    except ValueError:
        return None  # the SDK's parse error names where
    if not isinstance(call, dict):
        return None
    request_id = call.get("id")
    if isinstance(request_id, str):
        at = lone_surrogate_at(request_id)
        if at is not None:
            message = f"Invalid Request: id holds a lone surrogate at position {at}, not UTF-8"
            return _error(None, INVALID_REQUEST, message)
    method = call.get("method")
    version = headers.get(HEADER)
    if method in JSONRPC03Adapter.METHOD_TO_MODEL and version and not _is_0_3(version):
        shown = version if len(version) <= 20 else f"{version[:20]}..."
        message = (
            f"{method!r} is an A2A 0.3 method, and the call's A2A-Version is {shown!r}: send "
            f"it with no A2A-Version (or 0.3), or call {NAMES_1_0.get(method, method)!r} (1.0)"
        )
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            request_id = None
        return _error(request_id, VERSION_NOT_SUPPORTED, message)
    return None


def check_utf8(body: bytes) -> None:
    """400 `invalid_json` when `body` is not UTF-8, naming the offset of its first bad byte."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(
            400, "invalid_json", f"request body is not UTF-8 text (byte {exc.start} is not)"
        ) from None


def _is_0_3(version: str) -> bool:
    """Whether the SDK's 0.3 adapter takes `version` (its major and minor are 0.3's)."""
    sent, wanted = version.strip().split("."), PROTOCOL_VERSION_0_3.split(".")
    try:
        return [int(part) for part in sent[:2]] == [int(part) for part in wanted[:2]]
    except ValueError:
        return False


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
