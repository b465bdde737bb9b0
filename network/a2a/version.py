"""The A2A version of a JSON-RPC call that names none: 1.0 for a 1.0 method.

A2A 1.0 (§3.6) has clients send an `A2A-Version` header and servers read a request without
one as 0.3. On this endpoint 0.3's methods (`message/send`, `tasks/get`...) are answered by
the SDK's 0.3 adapter whatever the header says, so a call without the header that names a
1.0 method (`SendMessage`, `GetTask`...) can only mean 1.0: it is answered as such rather
than refused with `VersionNotSupportedError` (the official test kit, a2aproject/a2a-tck,
sends 1.0 calls without the header). A header the client sends is never changed.
"""

from __future__ import annotations

import json
from typing import Any

from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.utils.constants import PROTOCOL_VERSION_1_0, VERSION_HEADER
from starlette.types import Scope

HEADER = VERSION_HEADER.lower().encode()
METHODS_1_0 = frozenset(JsonRpcDispatcher.METHOD_TO_MODEL)


def with_version(scope: Scope, body: bytes) -> Scope:
    """`scope` with `A2A-Version: 1.0` added when it has no such header and `body` is a
    JSON-RPC call of a 1.0 method; `scope` itself otherwise."""
    headers = scope.get("headers", [])
    if any(name.lower() == HEADER for name, _ in headers):
        return scope
    try:
        call: Any = json.loads(body)
    except ValueError:  # the SDK answers it in its terms
        return scope
    if not isinstance(call, dict) or call.get("method") not in METHODS_1_0:
        return scope
    return {**scope, "headers": [*headers, (HEADER, PROTOCOL_VERSION_1_0.encode())]}
