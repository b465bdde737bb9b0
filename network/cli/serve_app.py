"""The app `agent-network serve` runs: AG-UI, and with `--a2a` A2A beside it, on one store.

Everything a deployment needs is an option, so no app factory has to be written:

- `--authorize FILE:FUNCTION` (the hook) or `--token-file PATH` (bearer tokens, each naming
  its principal: `network.serving.tokens`);
- `--cors-origin ORIGIN` (repeatable): browsers on those origins may call the server;
- `--allowed-host HOST` (repeatable): the `Host` header values accepted besides the loopback
  names. Bound to loopback (the default), the server refuses any other `Host` with 400, so a
  web page whose own name resolves to 127.0.0.1 (DNS rebinding) cannot run the network from
  the user's browser; a reverse proxy that passes its public name on names it here. Bound
  elsewhere, every `Host` is taken unless `--allowed-host` is given, and then those and the
  loopback names (a health check on the machine itself);
- `--store`, `--lease-ttl`: where threads live, how long a dead server's run holds its thread;
- `--max-runs N`: the most runs under way at once in each server process, over both
  protocols (default `network.serving.capacity.default_max_runs()`); beyond, 503
  `server_busy` with `Retry-After`;
- `--workers N`: N server processes (uvicorn's), on a database store (`--store`), which they
  share (one run per thread across them, by the store's leases);
- `--a2a` (`--a2a-path`, default `/a2a`): the network served over A2A too, its agent card at
  `/.well-known/agent-card.json`. Both protocols then serve one thread store (the same
  `MemoryStore` without `--store`): a conversation started over AG-UI goes on over A2A.

`--workers` is at most `MAX_WORKERS` and `--max-runs` at most `MAX_RUNS_OPTION`: a value past
them is a typo (a process each, a run's sockets each), refused with one line.

`serve_app(args)` builds it from the parsed options (`network.cli.main`), `factory()` from
`$AGENT_NETWORK_SERVE_ARGS` in each worker process uvicorn starts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from network.cli.bind import LOOPBACK_HOSTS, host_name, is_loopback, port_number
from network.cli.endpoint import add_endpoint_options, endpoint_from_args, endpoint_override
from network.cli.load import CLIError, load_authorize, load_network, store_option
from network.cli.orphan_watch import exit_when_orphaned
from network.cli.web_names import allowed_host, cors_origin
from network.errors import ConfigurationError
from network.run.definition import RunnableNetwork
from network.serving.default_store import default_memory_store
from network.threads.leases import DEFAULT_LEASE_TTL, check_ttl
from network.threads.resolve import open_store

ARGS_VARIABLE = "AGENT_NETWORK_SERVE_ARGS"
SUPERVISOR_VARIABLE = "AGENT_NETWORK_SERVE_SUPERVISOR"
CARD_PATH = "/.well-known/agent-card.json"
CORS_HEADERS = ["authorization", "content-type", "a2a-version", "a2a-extensions"]
# the answers' headers a page reads (CORS shows it only the safelisted ones otherwise): when
# to try again (503 `server_busy`, 409 `thread_busy`) and how to authenticate (401)
CORS_EXPOSED = ["retry-after", "www-authenticate"]
SHUTDOWN_GRACE_S = 10  # on SIGTERM, how long the runs under way have to end before cancelled
MAX_WORKERS = 64  # server processes: one per core is the most that helps
MAX_RUNS_OPTION = 10_000  # runs at once in a process: 8 open files each, 80,000 in all
MIN_LEASE_TTL = 1.0  # `--lease-ttl`'s floor: 0.3 s ran out before a run's first step
_KEPT: contextlib.ExitStack | None = None  # a worker's endpoint override, for its lifetime


AUTHORIZE_HELP = (
    "FILE:FUNCTION: the authorize(request, thread_id) hook naming each request's principal "
    "(see docs/serving.md)"
)


def add_serve_options(serve: argparse.ArgumentParser) -> None:
    """`serve`'s options (the command's parser, and each worker's)."""
    serve.add_argument("target", metavar="FILE:NETWORK")
    serve.add_argument("--host", type=host_name, default="127.0.0.1")
    serve.add_argument("--port", type=port_number, default=8000)
    serve.add_argument("--path", default="/", help="the AG-UI endpoint's path (default /)")
    serve.add_argument(
        "--store",
        metavar="URL|PATH",
        help="run every thread on this thread store: a database URL (postgresql://...), an "
        "SQLite path or sqlite:PATH (default: threads in this process's memory)",
    )
    serve.add_argument(
        "--lease-ttl",
        type=float,
        default=DEFAULT_LEASE_TTL,
        metavar="SECONDS",
        help="with --store: how long a run's lease on its thread lasts without renewal, so how "
        f"long a thread stays busy after its server died mid-run (default {DEFAULT_LEASE_TTL:g}, "
        f"at least {MIN_LEASE_TTL:g})",
    )
    serve.add_argument(
        "--max-runs",
        type=int,
        default=None,
        metavar="N",
        help="the most runs under way at once in each server process, AG-UI and A2A together; "
        "beyond, requests are refused with 503 server_busy (default: the open-file limit / 8, "
        f"at most 512; given, at most {MAX_RUNS_OPTION:,})",
    )
    serve.add_argument("--authorize", metavar="FILE:FUNCTION", help=AUTHORIZE_HELP)
    serve.add_argument(
        "--token-file",
        metavar="PATH",
        help="authorize requests by bearer token: one 'PRINCIPAL TOKEN' a line",
    )
    serve.add_argument(
        "--cors-origin",
        type=cors_origin,
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let browsers on this origin call the server (repeatable)",
    )
    serve.add_argument(
        "--allowed-host",
        type=allowed_host,
        action="append",
        default=[],
        metavar="HOST",
        help="accept requests whose Host header names HOST (repeatable; a reverse proxy's "
        "public name). Bound to loopback, other names than the loopback ones are refused "
        "(DNS rebinding)",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help=f"server processes, 1 to {MAX_WORKERS} (more than one needs a database --store, "
        "which they share)",
    )
    serve.add_argument(
        "--a2a", action="store_true", help="serve it over A2A too, on the same thread store"
    )
    serve.add_argument(
        "--a2a-path", default="/a2a", help="the A2A JSON-RPC endpoint's path (default /a2a)"
    )
    add_endpoint_options(serve)


def serve_app(args: argparse.Namespace) -> tuple[Any, Any]:
    """The ASGI app for `serve`'s options, and the network it serves."""
    network = load_network(args.target)
    if not args.path.startswith("/"):
        raise CLIError(f"--path must start with '/', got {args.path!r}")
    try:
        check_ttl(args.lease_ttl)
    except ConfigurationError as exc:
        raise CLIError(f"--lease-ttl: {exc}") from exc
    if args.lease_ttl < MIN_LEASE_TTL:
        raise CLIError(
            f"--lease-ttl: must be at least {MIN_LEASE_TTL:g} second (a lease is renewed every "
            f"third of it; shorter, it runs out before a run's first step), got {args.lease_ttl:g}"
        )
    authorize = _authorize(args)
    slots = _slots(args)
    store = store_option(args.store)
    try:
        if getattr(args, "a2a", False):
            asgi = _both(network, args, authorize, store, slots)
        else:
            from network.agui import app  # noqa: PLC0415 (starlette)

            asgi = app(
                network,
                path=args.path,
                store=store,
                lease_ttl=args.lease_ttl,
                authorize=authorize,
                max_runs=slots,
            )
    except ConfigurationError as exc:  # a URL no store supports
        raise CLIError(f"--store: {exc}") from exc
    if args.cors_origin:
        asgi = CORSMiddleware(
            asgi,
            allow_origins=list(args.cors_origin),
            allow_methods=["GET", "POST"],
            allow_headers=CORS_HEADERS,
            expose_headers=CORS_EXPOSED,
        )
    return _hosts_checked(asgi, args), network


def _hosts_checked(asgi: Any, args: argparse.Namespace) -> Any:
    """`asgi` answering only the `Host` names allowed (see the module's docstring)."""
    allowed = [host.lower() for host in args.allowed_host]  # the header is compared lowercased
    if not allowed and not is_loopback(args.host):
        return asgi  # bound beyond this machine: reached by whatever name points here
    # A loopback name is always answered: a rebinding page sends its own name, never these,
    # and a health check on the machine itself (bound to 0.0.0.0) sends them.
    allowed += LOOPBACK_HOSTS
    return TrustedHostMiddleware(asgi, allowed_hosts=allowed, www_redirect=False)


def _slots(args: argparse.Namespace) -> Any:
    """The process's runs in flight (a `RunSlots`), one count for both protocols
    (`--max-runs`)."""
    return run_slots(getattr(args, "max_runs", None))


def run_slots(max_runs: int | None) -> Any:
    """`--max-runs` (serve's and mcp's) as a `RunSlots`, or the `CLIError` refusing it: below
    1, or above `MAX_RUNS_OPTION`."""
    from network.serving.capacity import RunSlots  # noqa: PLC0415 (not for `--help`)

    if max_runs is not None and max_runs > MAX_RUNS_OPTION:
        raise CLIError(f"--max-runs must be at most {MAX_RUNS_OPTION:,}, got {max_runs:,}")
    try:
        return RunSlots(max_runs)
    except ConfigurationError as exc:
        raise CLIError(f"--max-runs: {exc}") from exc


def check_workers(workers: int) -> None:
    """`--workers` from 1 to `MAX_WORKERS`, or the `CLIError` refusing it."""
    if not 1 <= workers <= MAX_WORKERS:
        raise CLIError(f"--workers must be from 1 to {MAX_WORKERS}, got {workers:,}")


def _authorize(args: argparse.Namespace) -> Any:
    # `is not None`: an empty value (an unset variable) is an error, never "no authorization"
    if args.authorize is not None and args.token_file is not None:
        raise CLIError("give --authorize or --token-file, not both")
    if args.authorize is not None:
        return load_authorize(args.authorize)
    if args.token_file is not None:
        if not args.token_file.strip():
            raise CLIError("--token-file is empty; give the path of a token file")
        from network.serving.tokens import token_file_authorize  # noqa: PLC0415

        try:
            return token_file_authorize(args.token_file)
        except ConfigurationError as exc:
            raise CLIError(f"--token-file: {exc}") from exc
    return None


def _both(
    network: RunnableNetwork, args: argparse.Namespace, authorize: Any, store: Any, slots: Any
) -> ASGIApp:
    """AG-UI at `--path`, A2A at `--a2a-path` and the card, on one store."""
    from network.a2a import app as a2a_app  # noqa: PLC0415 (a2a-sdk)
    from network.agui import app as agui_app  # noqa: PLC0415 (starlette)

    a2a_path = args.a2a_path
    if not a2a_path.startswith("/") or a2a_path.rstrip("/") == args.path.rstrip("/"):
        raise CLIError(f"--a2a-path must start with '/' and differ from --path, got {a2a_path!r}")
    shared, owned = open_store(store) if store is not None else (default_memory_store(), False)
    common = {
        "store": shared,
        "lease_ttl": args.lease_ttl,
        "authorize": authorize,
        "max_runs": slots,  # one bound for both protocols
    }
    agui = agui_app(network, path=args.path, **common)
    a2a = a2a_app(network, path=a2a_path, **common)
    return _Split(agui, a2a, a2a_path.rstrip("/"), shared if owned else None)


class _Split:
    """Requests for A2A (its endpoint, REST routes and card) to the A2A app, the rest to
    AG-UI's; each app's lifespan runs, and the store is closed after both."""

    def __init__(self, agui: Starlette, a2a: Starlette, a2a_path: str, owned: Any) -> None:
        self.agui = agui
        self.a2a = a2a
        self.a2a_path = a2a_path
        self.owned = owned

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await Starlette(lifespan=self._lifespan)(scope, receive, send)
            return
        if self._is_a2a(scope.get("path", "")):
            await self.a2a(scope, receive, send)
        else:
            await self.agui(scope, receive, send)

    def _is_a2a(self, path: str) -> bool:
        if path == CARD_PATH:
            return True
        if not self.a2a_path:  # A2A at the root: its endpoint and its REST routes, no more
            return path in ("", "/") or path.startswith("/v1/")
        return path == self.a2a_path or path.startswith(f"{self.a2a_path}/")

    @contextlib.asynccontextmanager
    async def _lifespan(self, _app: Any) -> AsyncIterator[None]:
        async with (
            self.agui.router.lifespan_context(self.agui),
            self.a2a.router.lifespan_context(self.a2a),
        ):
            yield
        if self.owned is not None:
            await self.owned.close()


def worker_environment(argv: list[str]) -> dict[str, str]:
    """What a worker process needs to build the app again: the command's arguments, and
    the supervisor's pid (this process: a worker ends once it is gone)."""
    return {ARGS_VARIABLE: json.dumps(argv), SUPERVISOR_VARIABLE: str(os.getpid())}


def factory() -> Any:
    """The app in a worker process uvicorn started (`--workers`), from the command's
    arguments in `$AGENT_NETWORK_SERVE_ARGS`."""
    global _KEPT
    parser = argparse.ArgumentParser(prog="agent-network serve")
    add_serve_options(parser)
    args = parser.parse_args(json.loads(os.environ[ARGS_VARIABLE]))
    asgi, network = serve_app(args)
    _KEPT = contextlib.ExitStack()
    _KEPT.enter_context(endpoint_override(network, endpoint_from_args(args)))
    # a supervisor killed outright leaves no worker serving
    exit_when_orphaned(int(os.environ.get(SUPERVISOR_VARIABLE) or os.getppid()))
    return asgi
