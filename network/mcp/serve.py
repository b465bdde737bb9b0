"""`serve_mcp`: serve a network as an MCP server over stdio or Streamable HTTP."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from network.errors import ConfigurationError
from network.mcp.authorized import AuthorizedSessions
from network.mcp.bad_ids import AnsweringBadIds
from network.mcp.bad_lines import answering_bad_lines
from network.mcp.server import mcp_server
from network.mcp.sessions import BusySessions, session_limits
from network.mcp.stdin_lines import stdin_lines
from network.network import Network
from network.numbers import check_number
from network.serving.capacity import RunSlots
from network.serving.principals import Authorize
from network.threads.leases import DEFAULT_LEASE_TTL

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

Transport = Literal["stdio", "http"]


async def serve_mcp(
    network: Network[Any],
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    on_ready: Callable[[str], None] | None = None,
    tool_name: str | None = None,
    description: str | None = None,
    authorize: Authorize | None = None,
    store: Any = None,
    lease_ttl: float = DEFAULT_LEASE_TTL,
    max_runs: int | RunSlots | None = None,
    max_sessions: int | None = None,
    session_idle_timeout: float | None = None,
) -> None:
    """Serve `network` as an MCP server until the client leaves (stdio) or the task is
    cancelled (HTTP).

    Args:
        transport: "stdio" (this process's stdin/stdout: nothing else may write to stdout)
            or "http" (Streamable HTTP at `http://host:port/path`, served by uvicorn).
        port: the HTTP port; 0 picks a free one (`on_ready` is told which).
        on_ready: called with the HTTP URL once the socket is bound (or with "stdio").
        tool_name: the tool's name, as for `mcp_server`.
        description: the tool's description, as for `mcp_server`.
        authorize: who may call, and on which thread, as for `mcp_server`; over HTTP also
            asked for every HTTP request (`thread_id` None) before the SDK reads it, so a
            request it refuses opens no session, and a session belongs to the principal
            that opened it (`network.mcp.authorized`).
        store: where calls on a thread keep it, as for `mcp_server`.
        lease_ttl: with `store`, as for `mcp_server`.
        max_runs: the most runs under way at once, as for `mcp_server`.
        max_sessions: HTTP only: the most Streamable HTTP sessions held at once; a request
            opening one more is refused with 503 `server_busy` and a `Retry-After`
            (default `network.mcp.sessions.default_max_sessions()`, at most 2,048).
        session_idle_timeout: HTTP only: seconds a session with no request in flight is kept
            before it is forgotten (its id then answers 404); default 1,800.
    """
    _check_endpoint(transport, host, port, path)  # checked before anything is made
    limits = session_limits(max_sessions, session_idle_timeout)
    server = mcp_server(
        network,
        tool_name=tool_name,
        description=description,
        authorize=authorize,
        store=store,
        lease_ttl=lease_ttl,
        max_runs=max_runs,
    )
    if transport == "stdio":
        from mcp.server.stdio import stdio_server  # noqa: PLC0415 (mcp)

        if on_ready is not None:
            on_ready("stdio")
        async with (
            stdin_lines() as lines,
            stdio_server(stdin=lines) as (read, write),  # type: ignore[arg-type]
            answering_bad_lines(read, write, lines) as messages,
        ):
            await server.run(messages, write, server.create_initialization_options())
        return
    await _serve_http(server, host, port, path, on_ready, limits, authorize)


def _check_endpoint(transport: Any, host: Any, port: Any, path: Any) -> None:
    """The transport, and over HTTP where it listens, or a `ConfigurationError` naming the
    option. An empty host would bind every interface of the machine (the CLI's `--host`
    refuses it too), a bool port is no port (True bound port 1)."""
    if transport not in ("stdio", "http"):
        raise ConfigurationError(f"MCP transport must be 'stdio' or 'http', got {transport!r}")
    if transport == "stdio":
        return
    if not isinstance(host, str) or not host.strip():
        raise ConfigurationError(
            f"serve_mcp host must name an address (0.0.0.0 for every interface), got {host!r}"
        )
    check_number("serve_mcp port", port, integer=True, maximum=65535)
    if not isinstance(path, str) or not path.startswith("/"):
        raise ConfigurationError(f"MCP path must start with '/', got {path!r}")


async def _serve_http(
    server: Server[Any],
    host: str,
    port: int,
    path: str,
    on_ready: Callable[[str], None] | None,
    limits: tuple[int, float],
    authorize: Authorize | None,
) -> None:
    """Streamable HTTP at `http://host:port/path`, served by uvicorn until cancelled, holding
    at most `limits` = (max_sessions, session_idle_timeout) sessions; with `authorize`, every
    request authorized before the SDK sees it (`network.mcp.authorized`); a request with an
    unusable id answered `-32600` (`network.mcp.bad_ids`)."""
    import uvicorn  # noqa: PLC0415 (uvicorn: only serving over HTTP loads it)

    max_sessions, idle_timeout = limits
    sdk_app = server.streamable_http_app(
        streamable_http_path=path,
        host=host,
        max_sessions=max_sessions,
        session_idle_timeout=idle_timeout,
    )
    manager = server.session_manager
    # a request with an unusable id answered, not read as a notification (`network.mcp.bad_ids`)
    answering = AnsweringBadIds(
        sdk_app, path, manager.max_request_body_size, manager.security_settings
    )
    app: Any = BusySessions(
        answering,
        max_sessions,
        # the SDK's count of the sessions it holds (no public accessor): read, never changed
        held=lambda: len(getattr(manager, "_server_instances", ())),
        path=path,
    )
    if authorize is not None:  # outermost: a stranger's request reaches nothing
        app = AuthorizedSessions(app, authorize)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:  # (a port past 65535 was refused by `_check_endpoint`)
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.listen(128)  # clients told the URL queue until uvicorn accepts
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    if on_ready is not None:
        on_ready(f"http://{shown}:{bound}{path}")
    await uvicorn.Server(config).serve(sockets=[sock])
