"""Served AG-UI runs per second: a real uvicorn server process, a real socket, one agent.

    python benchmarks/agui_served.py                    # in memory, 1 and 100,000 held threads
    python benchmarks/agui_served.py --against f178e9b  # and the library at that commit too
    python benchmarks/agui_served.py --stores memory,sqlite,postgres --held 1,10000,100000

The server is `agent-network`'s AG-UI app (`network.agui.app`) under uvicorn in a child
process (its event loop as uvicorn picks it), serving a one-agent network whose scripted
model answers at once in text: what is measured is the server's own work per run (parse,
admit, run, encode, write). Before measuring, the server holds `--held` threads (in memory:
records put in its registry; on a store: the runs it takes are on new threads either way, the
held count is for the registry). The client (this process, raw asyncio streams over
keep-alive connections, `--clients` at once) posts runs on new threads and reads each SSE
answer to its end. Figures per configuration: runs per second (wall), and the server process's
CPU milliseconds per run (from /proc, the less noisy one on a shared machine); median of
`--rounds` rounds, the configurations of one round interleaved (this checkout and `--against`
side by side), each round a fresh server process. On SQLite and PostgreSQL a counting pass
follows, in a server process of its own on asyncio's event loop (`db_counts` watches the
drivers, which costs CPU, so the timed servers are not watched): the statements,
transactions and round trips per run (`--count-runs` runs, one client, after a warm-up). One
JSON line on stdout (bench_common's schema), a Markdown table on stderr. Nothing here is
asserted by the tests.

Peers (`--peers`): the same client against pydantic-ai's AG-UI adapter and Microsoft Agent
Framework's AG-UI endpoint, each serving an agent on a model answering at once, in their own
environments (`benchmarks/setup_peers.sh agui`): `peers/agui_pydantic_ai.py`,
`peers/agui_agent_framework.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from revisions import export_revision

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEER_SERVERS = {
    "pydantic-ai": (HERE / ".venv-agui-pydantic-ai" / "bin" / "python", "agui_pydantic_ai.py"),
    "agent-framework": (
        HERE / ".venv-agui-agent-framework" / "bin" / "python",
        "agui_agent_framework.py",
    ),
}


# -- the server (child process) ------------------------------------------------------------


def serve(port: int, held: int, store: str, count: bool = False) -> None:
    """Run the AG-UI server on 127.0.0.1:`port` (in this child process). `count`: watch the
    database work (`db_counts`, on asyncio's own event loop) and answer `GET /__counts` with
    it; for the counting pass only, never while CPU is measured."""
    import logging

    import structlog
    import uvicorn

    from agents import Agent, ScriptedModel
    from network import Network
    from network.agui import ThreadRegistry, app
    from network.threads import MemoryStore

    try:
        from network.serving.registry import ThreadRecord
    except ImportError:  # the library before the serving layer
        from network.agui.registry import ThreadRecord

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    agent = Agent("scribe", model=ScriptedModel(lambda request: "noted"))
    network = Network("notes", agents=[agent])
    if store == "memory":
        registry = ThreadRegistry(max_threads=held + 1_000_000, max_bytes=1 << 40)
        asgi = app(network, threads=registry)
        for index in range(held):
            record = ThreadRecord(f"held-{index}", state={"topic": f"t{index}"})
            registry.admit(record)
    elif store == "memorystore":
        asgi = app(network, store=MemoryStore())
    else:
        asgi = app(network, store=store)
    loop = "auto"
    if count:
        import db_counts

        db_counts.install("postgres" if store.startswith("postgres") else "sqlite")
        asgi, loop = counting(asgi, db_counts.COUNTER), "asyncio"
    config = uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning", loop=loop)
    print("ready", flush=True)
    uvicorn.Server(config).run()


def counting(asgi: Any, counter: Any) -> Any:
    """`asgi`, with `GET /__counts` answering the counter's figures so far."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/__counts":
            statements, transactions, round_trips = counter.snapshot()
            data = json.dumps([statements, transactions, round_trips]).encode()
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
            ]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": data})
            return
        await asgi(scope, receive, send)

    return app


# -- the client (this process) ------------------------------------------------------------


def body(thread: str, run: str) -> bytes:
    payload = {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": f"m-{run}", "role": "user", "content": "note this"}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    return json.dumps(payload, separators=(",", ":")).encode()


async def one_client(port: int, path: str, runs: int, prefix: str) -> int:
    """Post `runs` runs on one keep-alive connection; the events read."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    events = 0
    try:
        for index in range(runs):
            data = body(f"{prefix}-{index}", f"r-{prefix}-{index}")
            head = (
                f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                f"accept: text/event-stream\r\ncontent-length: {len(data)}\r\n\r\n"
            ).encode()
            writer.write(head + data)
            status = await reader.readline()
            if b" 200 " not in status:
                raise RuntimeError(f"server answered {status!r}")
            chunked = False
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                if line.lower().startswith(b"transfer-encoding: chunked"):
                    chunked = True
            if not chunked:
                raise RuntimeError("expected a chunked event stream")
            text = bytearray()
            while True:
                size = int((await reader.readline()).split(b";")[0], 16)
                if size == 0:
                    await reader.readline()
                    break
                text += await reader.readexactly(size)
                await reader.readexactly(2)
            if b"RUN_FINISHED" not in text:
                raise RuntimeError("the run did not finish")
            events += text.count(b"\n\ndata: ") + 1
    finally:
        writer.close()
    return events


async def read_counts(port: int) -> list[int]:
    """The counting server's (statements, transactions, round trips) so far."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET /__counts HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
        answer = await reader.read()
    finally:
        writer.close()
    counts: list[int] = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    return counts


def count(command: list[str], env: dict[str, str], port: int, runs: int) -> dict[str, float]:
    """Statements, transactions and round trips per run, in a server of their own (`--count`:
    the counting is not in the CPU figures), one client, after a warm-up."""
    process = start([*command, "--count"], env, port)
    try:
        asyncio.run(_drive(port, 20, 1, "/", "warm"))
        before = asyncio.run(read_counts(port))
        asyncio.run(_drive(port, runs, 1, "/", "count"))
        after = asyncio.run(read_counts(port))
    finally:
        process.kill()
        process.wait(10)
    names = ("statements_per_run", "transactions_per_run", "round_trips_per_run")
    return {name: (b - a) / runs for name, a, b in zip(names, before, after, strict=True)}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(command: list[str], env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, cwd=ROOT)
    assert process.stdout is not None
    process.stdout.readline()  # "ready"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"{command} did not listen")


def measure(
    command: list[str], env: dict[str, str], port: int, runs: int, clients: int, path: str
) -> dict[str, float]:
    process = start(command, env, port)
    try:
        asyncio.run(_drive(port, max(20, runs // 10), clients, path, "warm"))
        cpu0, wall0 = cpu_seconds(process.pid), time.perf_counter()
        events = asyncio.run(_drive(port, runs, clients, path, "run"))
        wall, cpu = time.perf_counter() - wall0, cpu_seconds(process.pid) - cpu0
    finally:
        process.kill()
        process.wait(10)
    return {
        "runs_per_s": runs / wall,
        "server_cpu_ms_per_run": cpu * 1000 / runs,
        "events_per_run": events / runs,
    }


async def _drive(port: int, runs: int, clients: int, path: str, tag: str) -> int:
    share = runs // clients
    counts = await asyncio.gather(
        *(one_client(port, path, share, f"{tag}-{c}-{time.time_ns()}") for c in range(clients))
    )
    return sum(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--store", default="memory", help=argparse.SUPPRESS)
    parser.add_argument("--count", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--count-runs", type=int, default=100, help="runs of the counting pass")
    parser.add_argument("--held", default="1,100000", help="held threads, comma list")
    parser.add_argument("--stores", default="memory", help="memory, memorystore, sqlite, postgres")
    parser.add_argument("--against", default="", help="also the library at this git revision")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peers", action="store_true", help="also pydantic-ai and Agent Framework")
    args = parser.parse_args()
    if args.serve:
        serve(args.port, int(args.held), args.store, args.count)
        return
    versions: list[tuple[str, str]] = [("this checkout", str(ROOT))]
    if args.against:
        versions.append(
            (f"at {args.against}", str(export_revision(args.against, "agent-network-served-")))
        )
    folder = Path(tempfile.mkdtemp(prefix="agui-served-"))
    postgres = None
    stack = []
    if "postgres" in args.stores:
        sys.path.insert(0, str(ROOT))
        from tests.network.threads.postgres import postgres_server

        context = postgres_server()
        postgres = context.__enter__()
        stack.append(context)
    configs: list[tuple[str, list[str], dict[str, str], str]] = []
    counted: dict[str, tuple[list[str], dict[str, str]]] = {}  # the configurations on a database
    for store in args.stores.split(","):
        helds = args.held.split(",") if store == "memory" else ["0"]
        for held in helds:
            for label, source in versions:
                where = {
                    "memory": "memory",
                    "memorystore": "memorystore",
                    "sqlite": str(folder / f"{label.replace(' ', '-')}.db"),
                    "postgres": postgres or "",
                }[store]
                command = [sys.executable, __file__, "--serve", "--held", held, "--store", where]
                name = (
                    f"{store}, {int(held):,} held, {label}"
                    if store == "memory"
                    else f"{store}, {label}"
                )
                env = {**os.environ, "PYTHONPATH": source}
                configs.append((name, command, env, "/"))
                if store in ("sqlite", "postgres"):
                    counted[name] = (command, env)
    if args.peers:
        for peer, (python, script) in PEER_SERVERS.items():
            if python.exists():
                env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
                configs.append((peer, [str(python), str(HERE / "peers" / script)], env, "/"))
            else:
                print(f"{peer}: skipped (run benchmarks/setup_peers.sh agui)", file=sys.stderr)
    samples: dict[str, list[dict[str, float]]] = {name: [] for name, *_ in configs}
    try:
        for round_number in range(args.rounds):
            for name, command, env, path in configs:
                port = free_port()
                figures = measure(
                    [*command, "--port", str(port)], env, port, args.runs, args.clients, path
                )
                samples[name].append(figures)
                print(
                    f"round {round_number + 1}: {name}: {figures['runs_per_s']:.0f} runs/s, "
                    f"{figures['server_cpu_ms_per_run']:.3f} ms CPU per run",
                    file=sys.stderr,
                    flush=True,
                )
        counts = {}
        for name, (command, env) in counted.items():
            port = free_port()
            counts[name] = count([*command, "--port", str(port)], env, port, args.count_runs)
            print(f"{name}: {counts[name]}", file=sys.stderr, flush=True)
    finally:
        for context in stack:
            context.__exit__(None, None, None)
    results: dict[str, dict[str, float]] = {
        name: {
            key: round(statistics.median(s[key] for s in runs), 3)
            for key in ("runs_per_s", "server_cpu_ms_per_run", "events_per_run")
        }
        for name, runs in samples.items()
        if runs
    }
    for name, figures in counts.items():
        results[name].update({key: round(value, 2) for key, value in figures.items()})
    print(
        json.dumps(
            {
                "benchmark": "agui_served",
                "runs": args.runs,
                "clients": args.clients,
                "rounds": args.rounds,
                "results": results,
            }
        )
    )
    print("\n" + table(results), file=sys.stderr)


def table(results: dict[str, dict[str, float]]) -> str:
    """The figures as a Markdown table (database work: "-" for a server without one)."""
    lines = [
        "| server | runs/s | server CPU ms per run | events per run | statements per run"
        " | transactions per run | round trips per run |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, figures in results.items():
        work = [
            f"{figures[key]:g}" if key in figures else "-"
            for key in ("statements_per_run", "transactions_per_run", "round_trips_per_run")
        ]
        lines.append(
            f"| {name} | {figures['runs_per_s']:.0f} | {figures['server_cpu_ms_per_run']:.3f} | "
            f"{figures['events_per_run']:.0f} | " + " | ".join(work) + " |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
