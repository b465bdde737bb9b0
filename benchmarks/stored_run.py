"""A stored run against the same run in memory: CPU per run, and the database work it makes.

    python benchmarks/stored_run.py                   # this checkout
    python benchmarks/stored_run.py --against main    # and a git ref, interleaved, side by side
        [--runs N] [--rounds R] [--count-runs N] [--no-postgres] [--modes run,served]
        [--concurrency N] [--split-cores]
        [--backends none,memory,memory-waits,memory-pg,sqlite,sqlite-normal,postgres]

The run: one agent, three agent calls (a tool call, another, then a text answer), the tool
appending to a list in state, on one thread that grows by every run (its cost must not).
Two ways in: `run` (`network.run(text, thread=ThreadRef(id, store=store))`, the store opened
once) and `served` (the AG-UI server, `app(network, store=store)`, through httpx's ASGI
transport: no sockets, the figure is the server's work, its run lease included). Backends:
`none` (no thread at all; served: the server's in-memory registry), `memory` (`MemoryStore`),
`sqlite` (a file, `synchronous=FULL`, the default: each commit waits for an fsync),
`sqlite-normal` (`synchronous=NORMAL`: no fsync per commit, a commit survives a killed process
but not a power cut) and `postgres` (Debian's server, started here, fsync off as the tests
run it). `memory-waits` (not run by default) is `MemoryStore` with each commit sleeping
`--wait-ms` on the event loop first, as long as a commit waits for SQLite's fsync here: the
CPU a run costs for waiting alone (see benchmarks/README.md, "Where a stored run's CPU goes").
`memory-pg` (not run by default) is `MemoryStore` with each read of the thread and each commit
making one trivial statement's round trip (`SELECT 1`) to PostgreSQL first, on the SQL store's
own connections (`PostgresLink`: on libpq since `network.threads.pg_wire`, asyncpg before): as
many round trips as the PostgreSQL store makes, none of its statements, encoding or decoding.
The floor a store that asks PostgreSQL four times a run through its driver can reach (see
benchmarks/README.md, "The PostgreSQL pass").

`--concurrency N` runs N runs at once (each on a thread of its own, `--runs` shared among
them): the event loop has other runs to go on with while one waits for the database, as a
server does, and SQLite's writer commits the runs' commits together. With 1 (the default) one
run at a time: each wait for the database is the loop going idle and waking again.

Every figure comes from a fresh Python process (a child of this script): it opens the store,
makes `--warmup` runs, then `--runs` measured ones. Per run:

- `cpu_ms`: the process's CPU time (all its threads: the database threads too; not the
  PostgreSQL server's), `loop_ms` the event loop's thread's share of it, and `wall_ms`,
  measured with nothing watching the database; `server_ms`: the CPU time of the PostgreSQL
  backends serving the child's database meanwhile (not the server's shared processes: WAL
  writer, checkpointer), beside `cpu_ms`, not in it;
- `statements`: SQL statements the database executed for the run, BEGIN / COMMIT / ROLLBACK
  not counted (SQLite: its trace callback; PostgreSQL: the Execute and Query messages the
  client sent, read off the wire);
- `transactions`: BEGINs, plus statements run outside a transaction (each its own);
- `round_trips`: the times the event loop waited on the database: SQLite, calls handed to a
  database thread (aiosqlite's, or the store's own) and back; PostgreSQL, messages that make
  the server answer (Sync, Query) the client wrote.

`--split-cores` keeps the PostgreSQL server (its postmaster, and so every backend it forks) on
the last CPU and this script and its children on the others: the server's work then never
takes the client's core between the client's steps, as on a server of its own.

`--against REF` checks REF out into a temporary git worktree and measures it the same way,
each of its children right after this checkout's, on databases of its own. Medians over
`--rounds`. One JSON line on stdout; a Markdown table on stderr. Nothing is asserted.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from db_counts import COUNTER, install

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIGURES = (
    "cpu_ms",
    "loop_ms",
    "wall_ms",
    "server_ms",
    "statements",
    "transactions",
    "round_trips",
)
COUNTED = FIGURES[4:]  # from the counting pass
# the backends on a PostgreSQL database of their own
POSTGRES = ("postgres", "memory-pg")


def three_calls() -> Any:
    from agents import Agent, ScriptedModel, ToolContext, call, tool
    from network import Network

    @tool
    def note(text: str, ctx: ToolContext) -> str:
        """Note something."""
        ctx.kv.set("notes", [text])
        return "noted"

    def answer(request: Any) -> Any:
        since = 0
        for message in reversed(request.history):
            if message.role == "user":
                break
            since += message.role == "tool"
        return call("note", text=f"note {since}") if since < 2 else "done"

    agent = Agent("scribe", tools=[note], model=ScriptedModel(answer))
    return Network(
        "notes",
        agents=[agent],
        router=lambda ctx: agent if ctx.call_count < 3 else None,
        state_schema={"notes": {"type": list[str]}},
    )


async def served_turn(http: Any, thread: str, index: int, conversation: list[Any]) -> None:
    """One AG-UI request on `thread`, the client sending its whole conversation, as clients do:
    what it was streamed (tool calls, their results, text) and any MESSAGES_SNAPSHOT it got."""
    conversation.append({"id": f"u{index}", "role": "user", "content": f"go {index}"})
    sent = {"threadId": thread, "runId": f"r{index}", "messages": conversation}
    response = await http.post("/", json=sent)
    assert response.status_code == 200, response.text
    frames = [json.loads(f[6:]) for f in response.text.split("\n\n") if f[:6] == "data: "]
    assert frames[-1]["type"] == "RUN_FINISHED", frames[-1]
    held(frames, conversation)


def held(frames: list[Any], conversation: list[Any]) -> None:
    """The messages an AG-UI client holds after `frames` (in `conversation`, changed in place)."""
    calls: dict[str, Any] = {}
    for frame in frames:
        kind = frame["type"]
        if kind == "MESSAGES_SNAPSHOT":
            conversation[:] = frame["messages"]
        elif kind == "TOOL_CALL_START":
            call = {"id": frame["toolCallId"], "type": "function"}
            call["function"] = {"name": frame["toolCallName"], "arguments": ""}
            calls[frame["toolCallId"]] = call
            parent = {"id": frame["parentMessageId"], "role": "assistant", "toolCalls": [call]}
            conversation.append(parent)
        elif kind == "TOOL_CALL_ARGS":
            calls[frame["toolCallId"]]["function"]["arguments"] += frame["delta"]
        elif kind == "TOOL_CALL_RESULT":
            result = {"id": frame["messageId"], "role": "tool", "content": frame["content"]}
            conversation.append(result | {"toolCallId": frame["toolCallId"]})
        elif kind == "TEXT_MESSAGE_START":
            conversation.append({"id": frame["messageId"], "role": "assistant", "content": ""})
        elif kind == "TEXT_MESSAGE_CONTENT":
            conversation[-1]["content"] += frame["delta"]


def child(
    library: str,
    backend: str,
    mode: str,
    url: str,
    runs: int,
    warmup: int,
    counting: bool,
    lanes: int = 1,
    wait_ms: float = 0.0,
) -> None:
    """In a fresh process: measure `runs` runs of `library` on `backend`, `lanes` at a time;
    print the figures. `counting`: count the database's work (`db_counts`) instead of timing
    the runs."""
    sys.path.insert(0, library)
    import logging
    import time

    import anyio
    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if counting:
        install(backend)
    from network import ThreadRef
    from network.threads import MemoryStore, SQLStore

    network = three_calls()
    measured = runs // lanes * lanes  # shared evenly among the lanes

    async def main() -> dict[str, float]:
        store: Any = None
        if backend == "memory":
            store = MemoryStore()
        elif backend == "memory-waits":
            store = waiting(MemoryStore(), wait_ms / 1000)
        elif backend == "memory-pg":
            store = round_trips(MemoryStore(), url, lanes)
        elif backend == "sqlite-normal":
            store = SQLStore(url, sqlite_synchronous="NORMAL")
        elif backend in ("sqlite", "postgres"):
            store = SQLStore(url)
        if mode == "served":
            import httpx

            from network.agui import app

            asgi = app(network) if store is None else app(network, store=store)
            http = httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi), base_url="http://b")
            conversations: list[list[Any]] = [[] for _ in range(lanes)]

            async def one(lane: int, index: int) -> None:
                thread = f"t-{os.getpid()}-{lane}"
                await served_turn(http, thread, index, conversations[lane])
        else:

            async def one(lane: int, index: int) -> None:
                thread = f"t-{os.getpid()}-{lane}"
                on = None if store is None else ThreadRef(thread, store=store)
                result = await network.run(f"go {index}", thread=on)
                assert result.output == "done" and len(result.state.results) >= 3

        async def lane_runs(lane: int, first: int, count: int) -> None:
            for index in range(first, first + count):
                await one(lane, index)

        async def all_lanes(first: int, count: int) -> None:
            async with anyio.create_task_group() as group:
                for lane in range(lanes):
                    group.start_soon(lane_runs, lane, first, count // lanes)

        await all_lanes(0, warmup)
        database = url.rsplit("/", 1)[-1] if backend in POSTGRES else None
        before, server = COUNTER.snapshot(), server_cpu(database)
        cpu, loop, wall = time.process_time(), time.thread_time(), time.perf_counter()
        await all_lanes(warmup, measured)
        cpu, loop = time.process_time() - cpu, time.thread_time() - loop
        server = server_cpu(database) - server
        wall = time.perf_counter() - wall
        after = COUNTER.snapshot()
        if store is not None:
            await store.close()
        counts = [(b - a) / measured for a, b in zip(before, after, strict=True)]
        return {
            "cpu_ms": cpu * 1000 / measured,
            "loop_ms": loop * 1000 / measured,
            "wall_ms": wall * 1000 / measured,
            "server_ms": server * 1000 / measured,
            "statements": counts[0],
            "transactions": counts[1],
            "round_trips": counts[2],
        }

    print(json.dumps(anyio.run(main)))


def server_cpu(database: str | None) -> float:
    """The CPU seconds PostgreSQL's backends serving `database` have used (each child has a
    database of its own, named in its backends' titles); 0 without one."""
    if database is None:
        return 0.0
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            title = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ")
            if f" {database} ".encode() not in title or not title.startswith(b"postgres:"):
                continue
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def waiting(store: Any, seconds: float) -> Any:
    """`store` with each commit sleeping `seconds` on the event loop first (`memory-waits`)."""
    import anyio

    commit = store.append_results

    async def append_results(thread_id: str, done: Any) -> int:
        await anyio.sleep(seconds)
        result: int = await commit(thread_id, done)
        return result

    store.append_results = append_results
    return store


def round_trips(store: Any, url: str, lanes: int) -> Any:
    """`store` with each read of a thread and each commit making one `SELECT 1` round trip to
    PostgreSQL first, on a `PostgresLink` of `lanes` connections (`memory-pg`)."""
    from network.threads.sql_links import PostgresLink

    plain = url.replace("postgresql+asyncpg://", "postgresql://")
    link = PostgresLink({"dsn": plain}, size=lanes)
    get_thread, commit, close = store.get_thread, store.append_results, store.close

    async def read(thread_id: str) -> Any:
        await link.fetch("SELECT 1")
        return await get_thread(thread_id)

    async def append_results(thread_id: str, done: Any) -> int:
        await link.fetch("SELECT 1")
        result: int = await commit(thread_id, done)
        return result

    async def closing() -> None:
        await link.close()
        await close()

    store.get_thread, store.append_results, store.close = read, append_results, closing
    return store


def measure(
    library: Path, backend: str, mode: str, url: str, args: Any, counting: bool = False
) -> dict[str, float]:
    runs = args.count_runs if counting else args.runs
    command = [
        sys.executable,
        __file__,
        "--child",
        str(library),
        backend,
        mode,
        url,
        str(runs),
        str(args.warmup),
        "count" if counting else "time",
        str(args.concurrency),
        str(args.wait_ms),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=HERE)
    if done.returncode != 0:
        raise SystemExit(f"{library} {backend} {mode} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def checkout(ref: str, into: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), ref],
        check=True,
        capture_output=True,
    )
    return into


def url_of(backend: str, folder: Path, label: str, postgres: str | None) -> str:
    if backend.startswith("sqlite"):
        return f"sqlite+aiosqlite:///{folder / f'{label}-{backend}.db'}"
    if backend in POSTGRES:
        assert postgres is not None
        return postgres
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="a git ref to measure too, interleaved")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count-runs", type=int, default=30, help="runs of the counting pass")
    parser.add_argument("--modes", default="run,served")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--concurrency", type=int, default=1, help="runs at once, each its thread")
    parser.add_argument("--backends", default="none,memory,sqlite,sqlite-normal,postgres")
    parser.add_argument("--split-cores", action="store_true", help="the server on a CPU apart")
    parser.add_argument("--wait-ms", type=float, default=5.0, help="memory-waits' sleep")
    parser.add_argument("--child", nargs=9, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        library, backend, mode, url, runs, warmup, kind, lanes, wait_ms = args.child
        counting = kind == "count"
        child(
            library,
            backend,
            mode,
            url,
            int(runs),
            int(warmup),
            counting,
            int(lanes),
            float(wait_ms),
        )
        return
    backends = args.backends.split(",")
    backends = [b for b in backends if not (args.no_postgres and b in POSTGRES)]
    with ExitStack() as stack, tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        libraries = {"this checkout": ROOT}
        if args.against:
            base = checkout(args.against, folder / "base")
            stack.callback(
                subprocess.run,
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                check=False,
                capture_output=True,
            )
            libraries[args.against] = base
        postgres = None
        if any(backend in POSTGRES for backend in backends):
            sys.path.insert(0, str(ROOT))
            from tests.network.threads.postgres import postgres_server

            postgres = stack.enter_context(postgres_server())
            if args.split_cores:
                split_cores(postgres)
        samples: dict[tuple[str, str, str], list[dict[str, float]]] = {}
        for round_ in range(args.rounds):
            for mode in args.modes.split(","):
                for backend in backends:
                    for number, (label, library) in enumerate(libraries.items()):
                        tag = f"lib{number}-{mode}-{round_}"
                        url = url_of(backend, folder, tag, postgres)
                        if backend in POSTGRES:  # a database of its own per child
                            url = fresh_database(postgres, f"{tag}-{backend}")
                        figures = measure(library, backend, mode, url, args)
                        samples.setdefault((label, mode, backend), []).append(figures)
        for mode in args.modes.split(","):  # the counts: a pass of their own (see above)
            for backend in backends:
                for number, (label, library) in enumerate(libraries.items()):
                    tag = f"lib{number}-{mode}-count"
                    url = url_of(backend, folder, tag, postgres)
                    if backend in POSTGRES:
                        url = fresh_database(postgres, f"{tag}-{backend}")
                    counts = measure(library, backend, mode, url, args, counting=True)
                    for figures in samples[(label, mode, backend)]:
                        figures.update({name: counts[name] for name in COUNTED})
        report(samples, libraries, backends, args)


def split_cores(url: str) -> None:
    """The server at `url` (started here) on the last CPU this script may use, this script (and
    so its children) on the others."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--split-cores needs two CPUs or more")
    port = url.rsplit(":", 1)[1].split("/", 1)[0]
    postmaster = None
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                command = Path(entry.path, "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if command[0].endswith(b"/postgres") and f"-p {port}".encode() in b" ".join(command):
                postmaster = int(entry.name)
    if postmaster is None:
        raise SystemExit(f"--split-cores: no PostgreSQL server on port {port}")
    for entry in os.scandir("/proc"):  # its processes so far; later backends inherit it
        if entry.name.isdigit():
            try:
                parent = int(Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            if parent == postmaster:
                os.sched_setaffinity(int(entry.name), {cpus[-1]})
    os.sched_setaffinity(postmaster, {cpus[-1]})
    os.sched_setaffinity(0, set(cpus[:-1]))


def fresh_database(server: str | None, name: str) -> str:
    """A new database on the server (each child starts from empty tables)."""
    import asyncio

    import asyncpg

    assert server is not None
    plain = server.replace("postgresql+asyncpg://", "postgresql://")

    async def create() -> None:
        connection = await asyncpg.connect(plain)
        try:
            await connection.execute(f'CREATE DATABASE "{name.replace("-", "_")}"')
        finally:
            await connection.close()

    asyncio.run(create())
    return server.rsplit("/", 1)[0] + "/" + name.replace("-", "_")


def report(samples: Any, libraries: Any, backends: list[str], args: Any) -> None:
    medians = {
        f"{label} | {mode} | {backend}": {
            figure: round(statistics.median(s[figure] for s in runs), 2) for figure in FIGURES
        }
        for (label, mode, backend), runs in samples.items()
    }
    print(json.dumps(medians))
    err = sys.stderr
    print(
        f"\nper run (3 agent calls; medians of {args.rounds} processes x {args.runs} runs,"
        f" {args.concurrency} at a time)",
        file=err,
    )
    heads = " | ".join(f"{label}: CPU ms (on the loop)" for label in libraries)
    print(
        f"| mode | backend | {heads} | x in memory | wall ms | server CPU ms | statements |",
        end="",
        file=err,
    )
    print(" transactions | round trips |", file=err)
    print("| --- " * (len(libraries) + 8) + "|", file=err)
    for mode in args.modes.split(","):
        for backend in backends:
            counts = [medians[f"{label} | {mode} | {backend}"] for label in libraries]
            cells = [f"{f['cpu_ms']:.2f} ({f['loop_ms']:.2f})" for f in counts]
            bases = [
                medians.get(f"{label} | {mode} | memory", {}).get("cpu_ms") or 1.0
                for label in libraries
            ]
            ratios = [f["cpu_ms"] / base for f, base in zip(counts, bases, strict=True)]

            def pair(figure: str, counts: Any = counts) -> str:
                text = f"{counts[0][figure]:g}"
                return text + "".join(f" ({other[figure]:g})" for other in counts[1:])

            ratio = f"{ratios[0]:.2f}" + "".join(f" ({r:.2f})" for r in ratios[1:])
            print(
                f"| {mode} | {backend} | "
                + " | ".join(cells)
                + f" | {ratio} | {pair('wall_ms')} | {pair('server_ms')} | {pair('statements')} | "
                f"{pair('transactions')} | {pair('round_trips')} |",
                file=err,
            )


if __name__ == "__main__":
    main()
