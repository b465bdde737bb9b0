"""Over Streamable HTTP, a request whose `id` MCP cannot use gets the error JSON-RPC 2.0 asks
for, and a body that is not one JSON-RPC message `-32600` as over stdio.

The SDK's Streamable HTTP transport (the session path of the 2025 protocol versions, which
IDEs and the Inspector use) reads a request whose `id` is null, a fraction, a bool, an object
or an array as a notification: it answered 202 with no body and passed the message on, so the
client waited for an answer that never came. Its session-less path (a newer protocol version
in `MCP-Protocol-Version`) already answers such a body `-32600`; `AnsweringBadIds` does the
same on the session path: 400 (the SDK's status for a body it refuses), a JSON-RPC error with
a null id (`network.mcp.request_ids`), the message not passed on. A body of JSON that is not
one JSON-RPC message (a batch array: MCP has none since 2025-06-18; another version's
message; one without a `method`, a `result` or an `error`) is answered `-32600` too, in the
words the stdio server uses, where the SDK answered `-32602` (invalid params) with pydantic's
account of the whole body.

The body is read here (up to the SDK's limit, past which it is handed on untouched for the
SDK's 413) and handed on to the SDK whole when it is a message the SDK is to read. A request
the SDK refuses by its headers alone (a `Content-Type` that is not JSON; on loopback an
`Origin` or a `Host` not of this machine) is handed on unread, for the SDK's refusal (400, 403,
421): a web page elsewhere is told what it was told before.
"""

from __future__ import annotations

import json
from typing import Any

from network.mcp.request_ids import INVALID_REQUEST, NOT_ONE_MESSAGE, invalid_id_error, unusable_id

VERSION_HEADER = b"mcp-protocol-version"


class AnsweringBadIds:
    """An ASGI wrapper of the SDK's Streamable HTTP app: a `POST` to `path` on the session path
    whose body is a request with an unusable `id`, or JSON that is not one JSON-RPC message, is
    answered 400 with `-32600`; every other request passes as it is (its body replayed)."""

    def __init__(self, app: Any, path: str, max_body: int, security: Any = None) -> None:
        """`security`: the SDK's `TransportSecuritySettings` of the endpoint (None: the SDK's
        defaults), whose header checks come first."""
        from mcp.server.transport_security import TransportSecurityMiddleware  # noqa: PLC0415

        self.app = app
        self.path = path
        self.max_body = max_body
        self.security = TransportSecurityMiddleware(security)
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # noqa: PLC0415 (mcp)

        # the versions the SDK serves with sessions; another goes to its session-less path,
        # which answers these bodies itself
        self.handshake = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if not self._looked_at(scope) or self._declared_too_big(scope):
            await self.app(scope, receive, send)  # (too big: the SDK's 413, nothing read)
            return
        if await self._refused_by_headers(scope):
            await self.app(scope, receive, send)  # the SDK's refusal, nothing read
            return
        chunks: list[Any] = []
        size = 0
        while True:
            message = await receive()
            chunks.append(message)
            if message["type"] != "http.request":
                break  # the client left: the SDK sees it as it would have
            size += len(message.get("body", b""))
            if size > self.max_body or not message.get("more_body", False):
                break  # (past the limit: handed on for the SDK's 413, never parsed here)
        finished = chunks[-1]
        complete = finished["type"] == "http.request" and not finished.get("more_body", False)
        if complete and size <= self.max_body:
            body = b"".join(chunk.get("body", b"") for chunk in chunks)
            answer = _answer_for(body)
            if answer is not None:
                await _send_json(send, 400, answer)
                return

        async def replay() -> Any:
            return chunks.pop(0) if chunks else await receive()

        await self.app(scope, replay, send)

    def _looked_at(self, scope: Any) -> bool:
        """Whether this is a `POST` of the SDK's session path to the endpoint."""
        if scope["type"] != "http" or scope.get("method") != "POST":
            return False
        if scope.get("path") != self.path:
            return False
        headers = scope.get("headers", ())
        version = next((value for name, value in headers if name == VERSION_HEADER), None)
        return version is None or version.decode("latin-1") in self.handshake

    async def _refused_by_headers(self, scope: Any) -> bool:
        """Whether the SDK refuses this request by its headers, before reading its body."""
        from starlette.requests import Request  # noqa: PLC0415 (the SDK's web framework)

        return await self.security.validate_request(Request(scope), is_post=True) is not None

    def _declared_too_big(self, scope: Any) -> bool:
        """Whether the request's `Content-Length` is past the SDK's limit."""
        headers = scope.get("headers", ())
        length = next((value for name, value in headers if name == b"content-length"), None)
        return length is not None and length.isdigit() and int(length) > self.max_body


def _answer_for(body: bytes) -> dict[str, Any] | None:
    """The error answering `body`, when it is a request with an unusable `id`, or JSON that is
    not one JSON-RPC message; None for a body the SDK is to read (not JSON: its parse
    error)."""
    import pydantic_core  # noqa: PLC0415 (the SDK's parser: reads what the SDK reads)
    from mcp.types import jsonrpc_message_adapter  # noqa: PLC0415 (mcp)
    from pydantic import ValidationError  # noqa: PLC0415

    try:
        decoded = pydantic_core.from_json(body)
    except ValueError:
        return None
    kind = unusable_id(decoded)
    if kind is not None:
        return invalid_id_error(kind)
    try:  # (the envelope alone: `params` is any object, not read here)
        jsonrpc_message_adapter.validate_python(decoded, by_name=False)
    except ValidationError:
        error = {"code": INVALID_REQUEST, "message": NOT_ONE_MESSAGE}
        return {"jsonrpc": "2.0", "id": None, "error": error}
    return None


async def _send_json(send: Any, status: int, answer: dict[str, Any]) -> None:
    body = json.dumps(answer).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
