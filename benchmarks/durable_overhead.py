"""What a durable step costs (DBOS on SQLite and PostgreSQL), and queue throughput by workers.

Per-step overhead: a W1-shaped network (one agent, one tool call per agent call appending to
a state list, a code router) run to N agent calls, plain and durable; each agent call is three
recorded steps (router decision, model call, tool call), plus the run's first step and the
router's final decision. Overhead per step = (durable - plain) / recorded steps, median of
`--repeats` runs.

Throughput: W2-shaped runs (10 agent calls, the model sleeping 10 ms per call) put on the
PostgreSQL queue with `network.enqueue`, run by 1, 2 and 4 `agent-network worker` processes
(concurrency 8 each); wall time from the first enqueue until all runs succeeded.

Not a test: timings depend on the machine. Needs the `durable` extra, and PostgreSQL
(`--postgres URL`; without it, only SQLite is measured).

    python benchmarks/durable_overhead.py [--postgres postgresql://...] [--repeats 5]
    python benchmarks/durable_overhead.py --start-postgres   # fsync on (default) and off
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents import Agent, ScriptedModel, ToolContext, tool  # noqa: E402
from agents.models.scripted import call  # noqa: E402
from network import Network, durable  # noqa: E402
from network.history.messages import ToolMessage  # noqa: E402

SLEEP = float(os.environ.get("DURABLE_BENCH_SLEEP", "0"))


@tool
def append(item: str, ctx: ToolContext) -> str:
    """Append an item."""
    ctx.state.kv.set("items", [item])
    return "ok"


async def answer(request: Any) -> Any:
    if SLEEP:
        await asyncio.sleep(SLEEP)
    if request.history and isinstance(request.history[-1], ToolMessage):
        return call("append", item="x")
    return call("append", item="x")


def build(name: str, steps: int) -> Network:
    def route(ctx: Any) -> Any:
        return "worker" if ctx.call_count < steps else None

    agent = Agent(
        "worker", description="works", system="Work.", tools=[append], model=ScriptedModel(answer)
    )
    return Network(
        name,
        agents=[agent],
        router=route,
        state_schema={"items": {"type": list[str]}},
        max_iter=1000,
    )


w2 = build("w2", 10)  # the network the throughput workers load (`durable_overhead.py:w2`)


async def per_step(db: str, steps: int, repeats: int) -> dict[str, Any]:
    network = build(f"w1_{steps}", steps)
    durable.launch([network], db=db)
    try:
        plain, durable_runs = [], []
        for _ in range(repeats):
            started = time.perf_counter()
            await network.run("go")
            plain.append(time.perf_counter() - started)
            started = time.perf_counter()
            await network.run("go", durable=True, run_id=f"bench-{uuid.uuid4().hex}")
            durable_runs.append(time.perf_counter() - started)
    finally:
        durable.shutdown()
    recorded = 3 * steps + 2
    overhead = (statistics.median(durable_runs) - statistics.median(plain)) / recorded
    return {
        "db": db.split(":", 1)[0],
        "agent_calls": steps,
        "recorded_steps": recorded,
        "plain_ms": round(statistics.median(plain) * 1000, 2),
        "durable_ms": round(statistics.median(durable_runs) * 1000, 2),
        "overhead_ms_per_step": round(overhead * 1000, 3),
    }


def throughput(db: str, workers: int, runs: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), DURABLE_BENCH_SLEEP="0.01")
    target = f"{Path(__file__).resolve()}:w2"
    command = [sys.executable, "-m", "network.cli", "worker", target, "--db", db]
    command += ["--concurrency", "8"]
    procs = [
        subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(workers)
    ]
    client = durable.DurableClient(db)
    try:
        time.sleep(3)  # the workers launch
        started = time.perf_counter()
        ids = [client.enqueue("w2", "go") for _ in range(runs)]
        for run_id in ids:
            assert client.result(run_id).status == "SUCCESS"
        wall = time.perf_counter() - started
    finally:
        client.close()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=60)
    rate = round(runs / wall, 2)
    return {"workers": workers, "runs": runs, "wall_s": round(wall, 2), "runs_per_s": rate}


def both_servers(repeats: int) -> None:
    """Per-step costs on PostgreSQL with fsync on (its default) and off, one invocation."""
    from tests.network.threads.postgres import postgres_server

    with postgres_server(fsync=True) as on, postgres_server(fsync=False) as off:
        for label, server in (("fsync on", on), ("fsync off", off)):
            base = server.replace("postgresql+asyncpg://", "postgresql://").rsplit("/", 1)[0]
            for steps in (10, 100):
                db = f"{base}/bench_{uuid.uuid4().hex[:8]}"
                line = asyncio.run(per_step(db, steps, repeats))
                line["postgres"] = label
                line["load"] = os.getloadavg()[0]
                print(json.dumps(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres", help="a PostgreSQL server URL (a new database is made)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--runs", type=int, default=40, help="runs for the throughput test")
    parser.add_argument(
        "--start-postgres",
        action="store_true",
        help="start two PostgreSQL servers (the test helper's): PostgreSQL's default settings "
        "(fsync on) and the tests' (fsync off), and measure per-step costs on both",
    )
    args = parser.parse_args()
    if args.start_postgres:
        both_servers(args.repeats)
        return
    tmp = Path(tempfile.mkdtemp(prefix="durable-bench-"))
    dbs = [f"sqlite:///{tmp / 'dbos.sqlite'}"]
    if args.postgres:
        dbs.append(f"{args.postgres.rsplit('/', 1)[0]}/bench_{uuid.uuid4().hex[:8]}")
    for db in dbs:
        for steps in (10, 100):
            print(json.dumps(asyncio.run(per_step(db, steps, args.repeats))), flush=True)
    if args.postgres:
        for workers in (1, 2, 4):
            db = f"{args.postgres.rsplit('/', 1)[0]}/tp_{uuid.uuid4().hex[:8]}"
            print(json.dumps(throughput(db, workers, args.runs)), flush=True)


if __name__ == "__main__":
    main()
