"""The `agent-network` command line.

    agent-network run FILE:NETWORK "input" [--state JSON] [ENDPOINT OPTIONS]
    agent-network serve FILE:NETWORK [--host H] [--port P] [--path /] [--store URL|PATH] [--a2a]
        [--authorize FILE:FUNCTION | --token-file PATH] [--cors-origin O] [--workers N] [...]
    agent-network dev FILE:NETWORK [--host H] [--port P] [--store URL|PATH] [ENDPOINT OPTIONS]
    agent-network graph FILE:NETWORK
    agent-network mcp FILE:NETWORK [--transport stdio|http] [--host H] [--port P] [--path /mcp]
        [--max-runs N] [--max-sessions N] [--session-idle-timeout S]
    agent-network worker FILE:NETWORK... --db URL [--concurrency N] [--executor-id ID]
    agent-network replay FILE:NETWORK THREAD --store URL|PATH [--tools recorded|live] [--json]
    agent-network eval FILE:NETWORK DATASET [--concurrency N] [--json] [--out F] [--against F]

`run` runs the network once with a live trace (agent steps, streamed text, tool calls, state
changes as they happen) and a final summary (stop reason, agent calls, usage, timing). `serve`
serves it to AG-UI clients with uvicorn (`network.agui`), and with `--a2a` to A2A clients too
(`network.a2a`, on the same thread store; `network.cli.serve_app`). `graph` prints its Mermaid
diagram.
`mcp` serves it as an MCP server whose one tool runs the network (`network.mcp`), over stdio
(the default: an MCP client starts the command) or Streamable HTTP; logs go to stderr.
`dev` serves the dev UI (`network.devui`): a local page to run the network from a chat box,
watch it step by step and replay the threads stored in `--store`. `serve --store` and
`dev --store` run every thread on that thread store (SQLite file or PostgreSQL URL), so a
restarted server, or another one on the same database, continues it. `serve` and `dev` bind
127.0.0.1 by default and print a warning when bound to any other address (`serve` not when
`--authorize` or `--token-file` authorizes its requests).
The endpoint options (`--model`, `--api-base`, `--api-key`, `--param key=value`, and their
`AGENT_NETWORK_*` environment variables) put every agent (and an LLM router) on one model or
endpoint for this command only (`network.cli.endpoint`). The key is never printed.

`replay` runs today's network against a recorded thread of a store, offline, and prints where
it departs from the recording (`network.cli.replay`). `eval` runs it on a dataset of cases and
scores each run (`network.cli.evals`).

`FILE:NETWORK` is described in `network.cli.load`. A bad path, name or argument prints one
line on stderr and exits with status 2; a run that fails exits with status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO, cast

import anyio

from network.cli.bind import (
    LOOPBACK_HOSTS,
    host_name,
    is_loopback,
    listening_socket,
    port_number,
    warn_if_exposed,
)
from network.cli.endpoint import (
    RedactingWriter,
    add_endpoint_options,
    endpoint_from_args,
    endpoint_override,
)
from network.cli.evals import add_eval_parser, cmd_eval
from network.cli.load import CLIError, load_authorize, load_network, split_target, store_option
from network.cli.reload import ReloadingApp
from network.cli.replay import add_replay_parser, cmd_replay
from network.cli.serve_app import (
    AUTHORIZE_HELP,
    SHUTDOWN_GRACE_S,
    add_serve_options,
    check_workers,
    run_slots,
    serve_app,
    worker_environment,
)
from network.cli.store_check import check_store
from network.cli.visible import visible
from network.drawing import network_mermaid
from network.errors import ConfigurationError, MessageError, StateError
from network.network import Network
from network.run.inputs import check_text_input


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-network", description="Run, serve, develop or draw an agent network."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run a network once, with a live trace")
    run.add_argument("target", metavar="FILE:NETWORK")
    run.add_argument("input", help="the run's input text")
    run.add_argument("--state", help="initial state as a JSON object")
    add_endpoint_options(run)
    serve = commands.add_parser(
        "serve", help="serve a network over AG-UI (HTTP, SSE), and over A2A with --a2a"
    )
    add_serve_options(serve)
    dev = commands.add_parser("dev", help="a local web page to run, watch and replay a network")
    dev.add_argument("target", metavar="FILE:NETWORK")
    dev.add_argument("--host", type=host_name, default="127.0.0.1")
    dev.add_argument("--port", type=port_number, default=8000, help="0: any free port")
    dev.add_argument(
        "--store",
        metavar="URL|PATH",
        help="the thread store the page's runs live on, listed and replayed: a database URL, "
        "an SQLite path or sqlite:PATH (default: runs in memory; the threads listed are "
        "read from $AGENT_NETWORK_STORE, else agent-network.db)",
    )
    dev.add_argument(
        "--reload",
        action="store_true",
        help="load the network again when its file changes (threads are kept)",
    )
    dev.add_argument(
        "--authorize",
        metavar="FILE:FUNCTION",
        help="the authorize(request, thread_id) hook: the page then shows and runs only the "
        "principal's threads; required to bind anything but loopback (see docs/devui.md)",
    )
    add_endpoint_options(dev)
    graph = commands.add_parser("graph", help="print the network as a Mermaid diagram")
    graph.add_argument("target", metavar="FILE:NETWORK")
    mcp = commands.add_parser("mcp", help="serve a network as an MCP server (one tool)")
    mcp.add_argument("target", metavar="FILE:NETWORK")
    mcp.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    mcp.add_argument("--host", type=host_name, default="127.0.0.1", help="HTTP only")
    mcp.add_argument("--authorize", metavar="FILE:FUNCTION", help=AUTHORIZE_HELP)
    mcp.add_argument(
        "--store",
        metavar="URL|PATH",
        help="where calls on a thread keep it (default: in this process's memory)",
    )
    mcp.add_argument(
        "--port", type=port_number, default=8000, help="HTTP only; 0 picks a free port"
    )
    mcp.add_argument("--path", default="/mcp", help="HTTP only: the endpoint's path")
    mcp.add_argument(
        "--max-runs",
        type=int,
        default=None,
        metavar="N",
        help="the most runs under way at once; a call beyond is refused (server_busy) "
        "(default: the open-file limit / 8, at most 512; given, at most 10,000)",
    )
    mcp.add_argument(
        "--max-sessions",
        type=int,
        default=None,
        metavar="N",
        help="HTTP only: the most sessions held at once; one more is refused (503 "
        "server_busy) (default: the open-file limit / 4, at most 2048)",
    )
    mcp.add_argument(
        "--session-idle-timeout",
        type=float,
        default=None,
        metavar="S",
        help="HTTP only: seconds a session with no request in flight is kept (default 1800)",
    )
    add_endpoint_options(mcp)
    worker = commands.add_parser("worker", help="run these networks' queued durable runs (DBOS)")
    worker.add_argument("targets", metavar="FILE:NETWORK", nargs="+")
    worker.add_argument("--db", required=True, help="DBOS database: postgresql://... or sqlite:///")
    worker.add_argument("--concurrency", type=int, help="most runs at once in this worker")
    worker.add_argument("--executor-id", help="this worker's id (default: a new one)")
    add_replay_parser(commands)
    add_eval_parser(commands)
    return parser


def _quiet_logs(level: int = logging.WARNING, stream: TextIO | None = None) -> None:
    """The trace shows the run; library logs would only repeat it. `stream`: where the logs
    that remain go (stdout by default; stderr when stdout carries a protocol).

    A logged failure shows a plain traceback: structlog's default (rich, with every frame's
    local variables) writes ~80 KB per failure, the secrets the frames held among them, and
    takes seconds to render in the server's event loop, every request waiting. Coloured only
    on a terminal: a log file or a container's collected output gets plain text, not ANSI
    escape codes."""
    import structlog  # noqa: PLC0415 (structlog: only the commands that run need it)
    from structlog.typing import Processor  # noqa: PLC0415 (with structlog)

    colors = _colored(stream if stream is not None else sys.stdout)

    processors: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.StackInfoRenderer(),
        structlog.dev.set_exc_info,
        structlog.processors.TimeStamper(fmt="%Y-%m-%d %H:%M:%S", utc=False),
        structlog.dev.ConsoleRenderer(
            colors=colors, exception_formatter=structlog.dev.plain_traceback
        ),
    ]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(stream),
    )


def _colored(stream: TextIO) -> bool:
    """Whether logs to `stream` are coloured: on a terminal, as structlog's defaults decide
    it (`NO_COLOR` set: never; `FORCE_COLOR` set: always). The CLI's renderer was told
    nothing, and coloured a file or a pipe."""
    if os.environ.get("NO_COLOR"):
        return False
    if sys.platform == "win32" and importlib.util.find_spec("colorama") is None:
        return False  # structlog colours a Windows console only through colorama
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        return False


def _initial_state(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        state = json.loads(text)
    except ValueError as exc:
        raise CLIError(f"--state is not valid JSON: {exc}") from exc
    except RecursionError:
        raise CLIError("--state is not valid JSON: nested too deeply") from None
    if not isinstance(state, dict):
        raise CLIError("--state must be a JSON object")
    return state


def cmd_run(args: argparse.Namespace) -> int:
    from rich.console import Console  # noqa: PLC0415 (rich)

    from network.cli.trace import Trace, summary  # noqa: PLC0415 (rich)
    from network.run.emitter import Listener  # noqa: PLC0415 (with the trace)

    network = load_network(args.target)
    try:  # bytes that are no UTF-8 arrive as lone surrogates (the shell passes them on)
        check_text_input(args.input)
    except MessageError as exc:
        raise CLIError(f"input: {exc}") from None
    state = _initial_state(args.state)
    if state is not None:  # through the network's schema now: a bad seed is not a failed run
        try:
            network.new_state(state)
        except StateError as exc:
            raise CLIError(f"--state: {exc}") from None
    endpoint = endpoint_from_args(args)
    _quiet_logs()
    # The trace shows errors, and a provider's error may quote the key: it is written redacted.
    console = Console(highlight=False, file=cast(TextIO, RedactingWriter(sys.stdout, endpoint)))
    trace = Trace(console)

    async def main() -> Any:
        with endpoint_override(network, endpoint):
            return await network.run(args.input, state=state, sinks=[Listener(trace)])

    try:
        result = anyio.run(main)
    except KeyboardInterrupt:
        console.print("interrupted")
        return 130
    except Exception as exc:
        partial = getattr(exc, "partial_result", None)
        if partial is not None:
            summary(console, partial)
        message = endpoint.redact(f"error: run failed: {type(exc).__name__}: {visible(str(exc))}")
        print(message, file=sys.stderr)
        return 1
    summary(console, result)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415 (uvicorn)

    asgi, network = serve_app(args)  # every option checked before anything listens
    endpoint = endpoint_from_args(args)
    # and the store opened, once, in this process: before the logs are configured, so a
    # store that fails is the one `error:` line, not the store's own log line before it
    check_store(store_option(args.store))
    _quiet_logs()
    if args.authorize is None and args.token_file is None:  # else requests are authorized
        warn_if_exposed(args.host, "the AG-UI and A2A server" if args.a2a else "the AG-UI server")
    where = "in memory" if args.store is None else "on the thread store"

    # an IPv6 address in brackets, as a URL spells it (`http://[::1]:8000/`)
    host = f"[{args.host}]" if ":" in args.host and not args.host.startswith("[") else args.host

    def served(port: int) -> str:
        said = f"over AG-UI at http://{host}:{port}{args.path}"
        if args.a2a:
            said += f" and over A2A at http://{host}:{port}{args.a2a_path}"
        return said

    check_workers(args.workers)
    if args.workers > 1 and args.store is None:
        raise CLIError(
            "--workers above 1 needs a database --store: processes share threads only there"
        )
    # Bound here, not by uvicorn: the banner names the port a client must use (`--port 0`
    # takes a free one), and a port in use is one line, not uvicorn's traceback. With
    # `--workers`, this one socket is handed to each worker process (uvicorn's supervisor
    # does the same with the socket it would bind itself).
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        raise CLIError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from exc
    if args.workers > 1:
        from uvicorn.supervisors import Multiprocess  # noqa: PLC0415 (uvicorn)

        os.environ.update(worker_environment(sys.argv[sys.argv.index("serve") + 1 :]))
        config = uvicorn.Config(
            "network.cli.serve_app:factory",
            factory=True,
            workers=args.workers,
            log_level="warning",
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        )
        with sock:
            port = sock.getsockname()[1]
            print(f"Serving {network.name!r} {served(port)} ({args.workers} processes)", flush=True)
            with contextlib.suppress(KeyboardInterrupt):  # as uvicorn.run
                Multiprocess(config, sockets=[sock]).run()
        return 0
    with endpoint_override(network, endpoint), sock:
        port = sock.getsockname()[1]
        print(f"Serving {network.name!r} {served(port)} (threads {where})", flush=True)
        # warnings and errors only, as the `--workers` processes, `dev` and `mcp` log
        # on SIGTERM, the runs under way have SHUTDOWN_GRACE_S to end, then are cancelled
        # (their leases released): a run that never ends kept the process running
        config = uvicorn.Config(
            asgi, log_level="warning", timeout_graceful_shutdown=SHUTDOWN_GRACE_S
        )
        uvicorn.Server(config).run(sockets=[sock])
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from network.mcp import serve_mcp  # noqa: PLC0415 (mcp)
    from network.mcp.sessions import session_limits  # noqa: PLC0415 (with network.mcp)

    network = load_network(args.target)
    if not args.path.startswith("/"):
        raise CLIError(f"--path must start with '/', got {args.path!r}")
    endpoint = endpoint_from_args(args)
    authorize = load_authorize(args.authorize) if args.authorize is not None else None
    slots = run_slots(args.max_runs)
    for option, value in (
        ("--max-sessions", args.max_sessions),
        ("--session-idle-timeout", args.session_idle_timeout),
    ):
        if value is not None and args.transport != "http":  # stdio holds one session, its own
            raise CLIError(f"{option} is for --transport http (stdio has no sessions to bound)")
        try:
            session_limits(**{option[2:].replace("-", "_"): value})
        except ConfigurationError as exc:
            raise CLIError(f"{option}: {exc}") from exc
    _quiet_logs(stream=sys.stderr)  # over stdio, stdout is the protocol's
    check_store(store_option(args.store))  # opened once before a client connects
    if args.transport == "http":
        warn_if_exposed(args.host, "the MCP server")

    def ready(url: str) -> None:
        if url != "stdio":
            print(f"Serving {network.name!r} over MCP at {url}", flush=True)

    async def main() -> None:
        with endpoint_override(network, endpoint):
            await serve_mcp(
                network,
                authorize=authorize,
                store=store_option(args.store),
                transport=args.transport,
                host=args.host,
                port=args.port,
                path=args.path,
                on_ready=ready,
                max_runs=slots,
                max_sessions=args.max_sessions,
                session_idle_timeout=args.session_idle_timeout,
            )

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        return 130
    except ConfigurationError as exc:  # a bad --path, an address this machine cannot bind
        raise CLIError(str(exc)) from exc
    return 0


def _dev_authorize(args: argparse.Namespace) -> Any:
    """The dev UI's `--authorize` hook, required when it listens beyond this machine: the
    page lists every stored thread and runs as any user it names."""
    authorize = load_authorize(args.authorize) if args.authorize is not None else None
    if authorize is None and not is_loopback(args.host):
        raise CLIError(
            f"the dev UI shows every stored thread and runs as any user it is told; bound to "
            f"{args.host} it needs --authorize FILE:FUNCTION (the authorize hook of the "
            "served app), or bind 127.0.0.1"
        )
    return authorize


def cmd_dev(args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415 (uvicorn)

    from network.devui import app  # noqa: PLC0415 (starlette)
    from network.devui.server import dev_registry  # noqa: PLC0415 (starlette)

    network = load_network(args.target)
    endpoint = endpoint_from_args(args)
    store_option(args.store)  # a bad --store is reported before anything listens
    authorize = _dev_authorize(args)
    _quiet_logs()
    check_store(store_option(args.store))  # and the store opened once (its failure logged)
    exposed = warn_if_exposed(args.host, "the dev UI")
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        raise CLIError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from exc
    port = sock.getsockname()[1]
    # Bound elsewhere, the page is reached by whatever name the user types: any Host is taken.
    hosts = ["*"] if exposed else list(LOOPBACK_HOSTS)
    store = store_option(args.store)
    host = f"[{args.host}]" if ":" in args.host else args.host
    with contextlib.ExitStack() as overrides, sock:
        # every network loaded (the first, and each reload) runs on the endpoint options
        def endpointed(loaded: Network) -> Network:
            return overrides.enter_context(endpoint_override(loaded, endpoint))

        # The page's threads outlive a reload: on the store they live there; in memory, one
        # registry is shared by every rebuilt app.
        shared: dict[str, Any] = (
            {"run_on_store": True}
            if store is not None
            else {"threads": dev_registry()}
            if args.reload
            else {}
        )

        def build(served: Network) -> Any:
            return app(served, store=store, allowed_hosts=hosts, authorize=authorize, **shared)

        asgi: Any
        try:
            if args.reload:
                asgi = ReloadingApp(
                    lambda: endpointed(load_network(args.target)),
                    build,
                    Path(split_target(args.target)[0]),
                    network=endpointed(network),
                )
            else:
                asgi = build(endpointed(network))
        except ConfigurationError as exc:  # a URL no store supports
            raise CLIError(f"--store: {exc}") from exc
        print(f"Dev UI for {network.name!r} at http://{host}:{port}/", flush=True)
        config = uvicorn.Config(asgi, log_level="warning", lifespan="off")
        uvicorn.Server(config).run(sockets=[sock])
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    print(network_mermaid(load_network(args.target)), end="")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    import signal  # noqa: PLC0415 (only the worker handles signals)
    import threading  # noqa: PLC0415
    from collections import Counter  # noqa: PLC0415

    from network.durable import DurableConfigError, run_worker  # noqa: PLC0415 (dbos is optional and heavy)
    from network.durable.engine import MAX_CONCURRENCY, system_database_url  # noqa: PLC0415
    from network.durable.worker import worker_executor_id  # noqa: PLC0415

    networks = [load_network(target) for target in args.targets]
    named = Counter(network.name for network in networks)
    twice = [name for name, count in named.items() if count > 1]
    if twice:  # (a target given twice loads its network twice)
        raise CLIError(f"two of the targets are networks named {twice[0]!r}: give each once")
    if args.concurrency is not None and not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise CLIError(
            f"--concurrency must be from 1 to {MAX_CONCURRENCY:,}, got {args.concurrency}"
        )
    try:
        system_database_url(args.db)
    except DurableConfigError as exc:
        raise CLIError(f"--db: {exc}") from None
    try:  # refused here as one line, not by the launch's traceback
        executor_id = worker_executor_id(args.executor_id)
    except DurableConfigError as exc:
        raise CLIError(f"--executor-id: {exc}") from None
    _open_durable_db(args.db)
    _quiet_logs()
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    names = ", ".join(repr(network.name) for network in networks)
    print(f"Worker for {names} started", flush=True)
    try:
        run_worker(
            networks,
            db=args.db,
            concurrency=args.concurrency,
            executor_id=executor_id,
            stop=stop,
        )
    except DurableConfigError as exc:  # refused at launch: two networks of one name, say
        raise CLIError(str(exc)) from None
    return 0


def _open_durable_db(db: str) -> None:
    """Open the worker's database once before it starts (its tables made, as the launch makes
    them), or a `CLIError` naming `--db` with the driver's reason (its class and first line: a
    connection's names the host, never the password). A server that refused the connection
    or the credentials was a traceback after "Worker ... started"."""
    from network.durable import DurableClient, DurableConfigError  # noqa: PLC0415 (dbos is optional and heavy)

    try:
        DurableClient(db).close()
    except DurableConfigError as exc:
        raise CLIError(f"--db: {exc}") from None
    except Exception as exc:
        driver = getattr(exc, "orig", None) or exc  # the driver's error, not SQLAlchemy's wrapping
        text = str(driver).splitlines()[0] if str(driver) else ""
        reason = f"{type(driver).__name__}: {text}" if text else type(driver).__name__
        raise CLIError(f"--db: cannot open the durable runs database: {reason}") from None


COMMANDS = {
    "run": cmd_run,
    "serve": cmd_serve,
    "dev": cmd_dev,
    "graph": cmd_graph,
    "mcp": cmd_mcp,
    "worker": cmd_worker,
    "replay": cmd_replay,
    "eval": cmd_eval,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `agent-network`; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except CLIError as exc:
        print(f"error: {visible(str(exc))}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
