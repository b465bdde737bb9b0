"""Per-run cost on long threads: agent-network's stores beside LangGraph's checkpointers.

The shape (issue 22): one run = one user message, one agent call whose scripted model asks for
one tool call, the tool's result; the run is saved to its thread. A thread of L earlier calls
is built first in bulk (ours: one commit through the store API; LangGraph: one `update_state`
with the same 3 x L messages), then RUNS runs are timed one by one on it and the medians are
reported, in milliseconds per run, at L = 10, 1,000 and 10,000: wall time, and CPU time of the
benchmarking process (all its threads; not the database server's), which other load on a shared
machine disturbs much less than wall time.

    python benchmarks/long_threads.py [--quick] [--postgres-url URL]

Backends: ours on MemoryStore, SQLite (a temporary file, synchronous=FULL) and PostgreSQL;
LangGraph (run in benchmarks/.venv-peers by peers/langgraph_threads_bench.py, skipped when that
venv is missing) with InMemorySaver, AsyncSqliteSaver and AsyncPostgresSaver. Without
`--postgres-url` a throwaway PostgreSQL server is started as the tests start theirs (Debian's
`postgresql` package). One JSON line on stdout; Markdown tables (wall, CPU) on stderr.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from network import ThreadRef  # noqa: E402

LENGTHS = (10, 1_000, 10_000)
RUNS = 30
PEERS_PYTHON = HERE / ".venv-peers" / "bin" / "python"


async def ours(store: Any, lengths: tuple[int, ...], runs: int) -> dict[str, Any]:
    """Median wall time and median CPU time (this process, all its threads) per run, in ms."""
    from agents import Agent, ScriptedModel, call, tool
    from network import Network
    from tests.network.threads.long_thread import build_thread

    @tool
    def lookup(n: int) -> str:
        """Look a number up."""
        return f"found {n}"

    agent = Agent("a", tools=[lookup], model=ScriptedModel(lambda request: call("lookup", n=1)))
    network = Network("chat", agents=[agent])
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for length in lengths:
        thread_id = f"thread-{length}"
        await build_thread(store, thread_id, length)
        await network.run("warm up", thread=ThreadRef(thread_id, store=store))
        walls, cpus = [], []
        for n in range(runs):
            started, used = time.perf_counter(), time.process_time()
            await network.run(f"message {n}", thread=ThreadRef(thread_id, store=store))
            walls.append((time.perf_counter() - started) * 1000)
            cpus.append((time.process_time() - used) * 1000)
        wall[str(length)] = statistics.median(walls)
        cpu[str(length)] = statistics.median(cpus)
    return {"wall": wall, "cpu": cpu}


async def measure_ours(postgres_url: str, lengths: tuple[int, ...], runs: int) -> dict[str, Any]:
    from network.threads import MemoryStore, SQLStore

    figures: dict[str, Any] = {"memory": await ours(MemoryStore(), lengths, runs)}
    with tempfile.TemporaryDirectory() as tmp:
        async with SQLStore(f"{tmp}/threads.db") as sqlite:
            figures["sqlite"] = await ours(sqlite, lengths, runs)
    async with SQLStore(postgres_url, table_prefix=f"bench{int(time.time())}_") as pg:
        figures["postgres"] = await ours(pg, lengths, runs)
    return figures


def measure_langgraph(postgres_url: str, lengths: tuple[int, ...], runs: int) -> Any:
    if not PEERS_PYTHON.exists():
        return "peers venv missing: run `bash benchmarks/setup_peers.sh python`"
    script = HERE / "peers" / "langgraph_threads_bench.py"
    args = [str(PEERS_PYTHON), str(script), "--postgres-url", postgres_url, "--runs", str(runs)]
    args += ["--lengths", ",".join(map(str, lengths))]
    done = subprocess.run(args, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        return f"failed: {done.stderr.strip()[-500:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(figures: dict[str, Any], lengths: tuple[int, ...], kind: str) -> str:
    """The Markdown table of one kind of figure ("wall" or "cpu") per framework and backend."""
    head = f"| backend ({kind} ms/run) | " + " | ".join(f"L={n:,}" for n in lengths) + " |"
    lines = [head, "|" + " --- |" * (len(lengths) + 1)]
    for framework, backends in figures.items():
        if not isinstance(backends, dict):
            lines.append(f"| {framework}: {backends} |" + " |" * len(lengths))
            continue
        for backend, measured in backends.items():
            cells = " | ".join(f"{measured[kind][str(n)]:.2f}" for n in lengths)
            lines.append(f"| {framework} {backend} | {cells} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10 runs per length")
    parser.add_argument("--postgres-url", help="a PostgreSQL server to use (else one is started)")
    parser.add_argument("--no-peers", action="store_true", help="ours only")
    options = parser.parse_args()
    import logging

    import structlog

    # The library logs every run at INFO; printing that would be most of what is measured.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    runs = 10 if options.quick else RUNS
    with ExitStack() as stack:
        url = options.postgres_url
        if url is None:
            from tests.network.threads.postgres import postgres_server

            url = stack.enter_context(postgres_server())
        figures: dict[str, Any] = {"agent-network": anyio.run(measure_ours, url, LENGTHS, runs)}
        if not options.no_peers:
            plain = url.replace("postgresql+asyncpg://", "postgresql://")
            figures["langgraph"] = measure_langgraph(plain, LENGTHS, runs)
    print(table(figures, LENGTHS, "wall"), file=sys.stderr)
    print(file=sys.stderr)
    print(table(figures, LENGTHS, "cpu"), file=sys.stderr)
    print(json.dumps({"benchmark": "long_threads", "unit": "ms per run", "figures": figures}))


if __name__ == "__main__":
    main()
