"""The W3C trace context an MCP tool call carries, so that the server's trace continues the
calling run's (`network.telemetry.propagation`).

The call's message carries it in `params._meta` (`traceparent`, `tracestate`), as MCP's
SEP-414 says and the SDK's server reads it; over Streamable HTTP its POST carries the same as
headers. The SDK sends a message from a task of its own, where the calling run is not known,
so the headers are read from the message's `_meta` as it leaves (`mirror_headers`, an event
hook of the connection's HTTP client), checked as an incoming value would be.

While the call is under way the calling run's span is OpenTelemetry's current one
(`calling`): with a global SDK tracer provider the SDK's own client span nests under it, and
the SDK writes that span's context into `_meta`, in the same trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from network.telemetry.propagation import (
    TRACEPARENT,
    continued,
    current_parent,
    incoming,
    outgoing_headers,
)


@contextmanager
def calling() -> Iterator[dict[str, str] | None]:
    """Around a tool call: the `_meta` entries that carry the calling span (None when there
    is none), that span current for the while."""
    parent = current_parent()
    if parent is None:
        yield None
        return
    with continued(parent):
        yield outgoing_headers(parent)


async def mirror_headers(request: Any) -> None:
    """An httpx request hook: a JSON-RPC POST whose `params._meta` carries a valid
    `traceparent` sends it (and its `tracestate`) as headers too."""
    if TRACEPARENT in request.headers or request.method != "POST":
        return
    try:
        body = request.content
    except Exception:  # a streamed body (the SDK sends JSON): nothing to read
        return
    if b'"traceparent"' not in body:
        return
    try:
        params = json.loads(body).get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
    except (ValueError, AttributeError):  # a batch, or not JSON: nothing to mirror
        return
    parent = incoming(meta) if isinstance(meta, dict) else None
    if parent is not None:
        request.headers.update(outgoing_headers(parent))
