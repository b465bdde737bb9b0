"""A request whose `id` MCP cannot use is answered with `-32600`, never left waiting.

MCP's request ids are strings or integers. The SDK reads a message whose `id` is anything
else (null, a fraction, a bool, an object, an array) as a notification, since its notification
model ignores the `id` member, and a notification gets no answer: the client that sent it
waited for ever (over stdio, and over Streamable HTTP, answered 202). JSON-RPC 2.0 tells such
a message by the `id` member being there, not by which model reads it, and asks for an error
with a null id (the id could not be read): `-32600` (invalid request). The answer names the
kind of id, never its value.

A message without a `method` (a response, which is never answered) and one without an `id`
(a notification) are left as they are.
"""

from __future__ import annotations

from typing import Any

INVALID_REQUEST = -32600  # JSON-RPC 2.0's code for a message that is not a valid request
# what a line or body that is no JSON-RPC message at all is told, over stdio and HTTP alike
NOT_ONE_MESSAGE = "Invalid Request: not one JSON-RPC 2.0 message (batches are not supported)"


def unusable_id(decoded: Any) -> str | None:
    """What is wrong with the `id` of `decoded` (a JSON-RPC message as parsed), when it is a
    request (it has a `method`) whose `id` is no string or integer; else None."""
    if not isinstance(decoded, dict) or "method" not in decoded or "id" not in decoded:
        return None
    ident = decoded["id"]
    if isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool)):
        return None
    return _KINDS.get(type(ident), "a value of another kind")


_KINDS: dict[type, str] = {
    type(None): "null",
    bool: "a boolean",
    float: "a number with a fraction or an exponent",
    dict: "an object",
    list: "an array",
}


def invalid_id_error(kind: str) -> dict[str, Any]:
    """The JSON-RPC error (as JSON) answering a request whose `id` is `kind`."""
    message = f"Invalid Request: the id must be a string or an integer, got {kind}"
    return {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
