"""How many Streamable HTTP sessions the MCP server holds, and how long an idle one lives.

Over Streamable HTTP anyone who reaches the endpoint opens a session with one `initialize`
request, and the server keeps it (its transport, its streams, a task serving it) until the
client ends it with `DELETE`. A stranger who never does makes the server hold sessions
without end, whatever `max_runs` says (a session holds no run). So the server holds at most
`max_sessions` at once, and forgets one that has had no request in flight (no call being
served, no open `GET` stream) for `session_idle_timeout` seconds: its id then answers 404, and
the client opens another, as the MCP specification says it must.

The count and the expiry are the SDK's (`StreamableHTTPSessionManager(max_sessions=,
session_idle_timeout=)`), decided under its own lock so that two requests cannot both take the
last place. What this module adds is the refusal: the SDK answers a session over the limit
with a bare 503 (documented as its only one); `BusySessions` answers it as the server's other
refusals, 503 `server_busy` with a `Retry-After`, in a JSON-RPC error the SDK's client shows
its caller (`refused (server_busy): ...`, the code also in `error.data.code`).

The default limit, `default_max_sessions()`, is what one process can hold, derived as
`default_max_runs()` is: a session may keep a socket open (its `GET` stream) and a call's
`POST` beside it, so a quarter of the open-file limit, and at most `MAX_DEFAULT_SESSIONS` (an
idle session holds some tens of kB: 2,048 of them are well under 100 MB).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from network.numbers import check_number
from network.serving.capacity import RETRY_AFTER_SECONDS, open_file_share
from network.serving.errors import RequestError

MAX_DEFAULT_SESSIONS = 2048
FDS_PER_SESSION = 4  # its GET stream, a call's POST, with room for the runs' own
DEFAULT_SESSION_IDLE_TIMEOUT = 30 * 60.0  # seconds: a client between two tasks keeps its session
SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"
INTERNAL_ERROR = -32603  # the JSON-RPC code the SDK gives its own refusal: kept for its clients
INVALID_REQUEST = -32600  # the JSON-RPC code of a request the client may not make


def default_max_sessions() -> int:
    """The default limit on sessions held: the open-file limit / `FDS_PER_SESSION`, from 1 to
    `MAX_DEFAULT_SESSIONS` (`MAX_DEFAULT_SESSIONS` where the limit is unknown or unlimited)."""
    return open_file_share(FDS_PER_SESSION, MAX_DEFAULT_SESSIONS)


def session_limits(
    max_sessions: int | None = None, session_idle_timeout: float | None = None
) -> tuple[int, float]:
    """`serve_mcp`'s `max_sessions=` and `session_idle_timeout=` checked, defaults filled in,
    or a `ConfigurationError` naming the option."""
    if max_sessions is None:
        max_sessions = default_max_sessions()
    check_number("max_sessions", max_sessions, integer=True, minimum=1)
    if session_idle_timeout is None:
        session_idle_timeout = DEFAULT_SESSION_IDLE_TIMEOUT
    check_number("session_idle_timeout", session_idle_timeout, above=True)
    return max_sessions, float(session_idle_timeout)


def busy(limit: int) -> RequestError:
    """The refusal of a session over `limit`."""
    return RequestError(
        503,
        "server_busy",
        f"the server is at its limit of {limit} open MCP "
        f"{'session' if limit == 1 else 'sessions'}; try again later",
        retry_after=RETRY_AFTER_SECONDS,
    )


class BusySessions:
    """An ASGI wrapper of the SDK's Streamable HTTP app: its refusal of a session over the
    limit (a 503 to a request that carries no session id) answered as `busy(limit)`, in a
    JSON-RPC error; every other request and answer passes as it is.

    `held()` (the sessions the SDK holds now) lets a request that would open one more at the
    limit be refused before its body is read: the SDK reads a whole body (up to 4 MiB) before
    it looks at the count. The SDK's own check, under its lock, still decides a race for the
    last place."""

    def __init__(
        self, app: Any, limit: int, held: Callable[[], int] | None = None, path: str = "/mcp"
    ) -> None:
        self.app = app
        self.limit = limit
        self.held = held
        self.path = path
        # the protocol versions the SDK serves with sessions: a request naming another goes to
        # its session-less ("modern") path, which holds none
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # noqa: PLC0415 (mcp)

        self.handshake = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = scope.get("headers", ()) if scope["type"] == "http" else ()
        if scope["type"] != "http" or any(name == SESSION_HEADER for name, _ in headers):
            await self.app(scope, receive, send)
            return
        if self._full(scope, headers):
            await send_refusal(send, busy(self.limit))
            return
        refused = False

        async def watch(message: Any) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 503:
                refused = True
            if not refused:
                await send(message)
            # (the SDK's own body is dropped: ours is sent once it is done)

        await self.app(scope, receive, watch)
        if refused:
            await send_refusal(send, busy(self.limit))

    def _full(self, scope: Any, headers: Any) -> bool:
        """Whether this request, which carries no session id, would open a session (the
        SDK's session path, not the modern protocol's session-less requests) while the
        server holds `limit` already."""
        if self.held is None or scope.get("path") != self.path:
            return False
        version = next((value for name, value in headers if name == VERSION_HEADER), None)
        if version is not None and version.decode("latin-1") not in self.handshake:
            return False  # the SDK serves it without a session
        return self.held() >= self.limit


async def send_refusal(
    send: Any, refusal: RequestError, headers: dict[str, str] | None = None
) -> None:
    """`refusal` answered over HTTP with its status, as a JSON-RPC error with a null id (no
    request of the body was read), with `headers` besides its own. The JSON-RPC code is
    -32603 (internal error) for a refusal of the server's (5xx, the SDK's own code for a
    session over the limit) and -32600 (invalid request) for one of the client's (4xx)."""
    error = {
        "code": INTERNAL_ERROR if refusal.status >= 500 else INVALID_REQUEST,
        "message": f"refused ({refusal.code}): {refusal.message}",
        "data": {"code": refusal.code, "retry_after": refusal.retry_after},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    sent = {**(headers or {}), **refusal.headers()}
    raw = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((name.encode(), value.encode()) for name, value in sent.items()),
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
