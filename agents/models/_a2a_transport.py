"""The bytes a remote A2A server may send `A2AModel`: bounded, and mended where a known peer
strays.

Every HTTP answer (the agent card, a JSON-RPC answer, an SSE stream) passes through
`BoundedTransport`, which stops reading past its limit (`exceeded` then says so: the SDK above
wraps the transport's errors in its own). A timestamp without a timezone is read as UTC. Each
request carries the W3C trace context of the calling run's span
(`network.telemetry.propagation`), so that the remote's trace continues it.
httpx is imported with this module, which `A2AModel` loads on its first call.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx

from network.telemetry.propagation import TRACEPARENT, outgoing_headers

# A timestamp with no timezone (fasta2a 2.1.1 sends `"2026-11-28T22:16:42.097723"`), which the
# SDK's protobuf parser refuses: read as UTC, as a timestamp without a zone means there.
_NAIVE_TIMESTAMP = re.compile(
    rb'("timestamp"\s*:\s*"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?)"'
)


def _zoned(line: bytes) -> bytes:
    return _NAIVE_TIMESTAMP.sub(rb'\1Z"', line) if b'"timestamp"' in line else line


class TooLarge(httpx.ReadError):
    """A remote's answer went past the byte limit."""


class BoundedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that reads at most `limit` bytes of each answer (`exceeded` says
    whether one went past: the SDK above wraps the transport's errors in its own)."""

    def __init__(self, limit: int) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.limit = limit
        self.exceeded = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if TRACEPARENT not in request.headers:  # the caller's span: the remote's run nests under
            request.headers.update(outgoing_headers())  # it (network.telemetry.propagation)
        response = await self.inner.handle_async_request(request)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:
            await response.aclose()
            self.exceeded = True
            raise TooLarge(f"answer of {declared} bytes", request=request)
        capped = _Capped(response.stream, self, request)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=capped,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Capped(httpx.AsyncByteStream):
    def __init__(self, inner: Any, owner: BoundedTransport, request: httpx.Request) -> None:
        self.inner = inner
        self.owner = owner
        self.request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        """The answer's bytes, whole lines at a time (a timestamp is mended within a line)."""
        read = 0
        pending = b""
        async for chunk in self.inner:
            read += len(chunk)
            if read > self.owner.limit:
                self.owner.exceeded = True
                raise TooLarge(f"answer past {self.owner.limit} bytes", request=self.request)
            pending += chunk
            cut = pending.rfind(b"\n") + 1
            if cut:
                yield _zoned(pending[:cut])
                pending = pending[cut:]
        if pending:
            yield _zoned(pending)

    async def aclose(self) -> None:
        await self.inner.aclose()
