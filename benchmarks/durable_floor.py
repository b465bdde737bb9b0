"""The floor under `durable_scaleout.py`'s CPU per step: what the same load costs without
durability, and what PostgreSQL spends on a bare statement.

Per number of workers W (`--workers`), W processes at once, each as a durable worker runs
them: `--rounds` x 4 runs, 4 at once, then CPU per "step" over the same 17 steps a run
(`durable_scaleout.STEPS`) of the processes (`time.process_time`, all threads), after one
warm-up round in each:

- `plain`: `durable_scaleout.py`'s network and model (5 agent calls, each model call sleeping
  50 ms), run in-process without durability (`Network.run`);
- `sleep`: no network at all, the same 5 sleeps of 50 ms a run: what a process that sleeps
  between steps spends waking up (the event loop, the OS's timer and scheduler);

and PostgreSQL's CPU (the server's processes, as `durable_scaleout.py` reads it) per bare
statement round trip, from W client processes at once, each `--statements` autocommit
statements on a connection of its own (psycopg, prepared):

- `select`: `SELECT 1` (a round trip, no write);
- `insert`: a one-row insert, committed (a step statement's commit, without its work).

Not a test: timings depend on the machine. One JSON line per figure.

    python benchmarks/durable_floor.py [--postgres URL] [--workers 1,2,4] [--rounds 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNS_AT_ONCE = 4


def child(kind: str, rounds: int, arg: str) -> None:
    """One process of a figure: warm, say ready, wait for `go` on stdin, measure, answer."""
    if kind in ("plain", "sleep"):
        os.environ["DURABLE_SCALEOUT_WORKER"] = "1"  # the scale-out's network is defined
        sys.path[:0] = [str(ROOT), str(HERE)]
        import durable_scaleout as scale

        async def one_run() -> None:
            if kind == "plain":
                await scale.scaleout.run("go")
            else:
                for _ in range(scale.CALLS):
                    await asyncio.sleep(scale.SLEEP)

        async def batch(runs_a_slot: int) -> None:
            async def slot() -> None:
                for _ in range(runs_a_slot):
                    await one_run()

            await asyncio.gather(*(slot() for _ in range(RUNS_AT_ONCE)))

        async def measured() -> tuple[float, float]:
            await batch(1)  # warm: imports, first calls
            print("ready", flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
            cpu0, wall0 = time.process_time(), time.perf_counter()
            await batch(rounds)
            return time.process_time() - cpu0, time.perf_counter() - wall0

        cpu, wall = asyncio.run(measured())
        print(json.dumps({"cpu_s": cpu, "wall_s": wall}), flush=True)
        return
    import psycopg

    statement = "SELECT 1" if kind == "select" else "INSERT INTO floor_rows (v) VALUES (%s)"
    params: tuple[Any, ...] = () if kind == "select" else (1,)
    with psycopg.connect(arg, autocommit=True) as conn:
        for _ in range(50):  # warm: prepared
            conn.execute(statement, params, prepare=True)
        print("ready", flush=True)
        sys.stdin.readline()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for _ in range(rounds):
            conn.execute(statement, params, prepare=True)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    print(json.dumps({"cpu_s": cpu, "wall_s": wall}), flush=True)


def together(
    kind: str, count: int, rounds: int, arg: str = "", reading: Callable[[], float] = time.time
) -> tuple[list[dict[str, float]], float]:
    """`count` children of `kind`, started together once all are warm: their answers, and
    how much `reading` grew from their start to their last answer (the warm-up left out)."""
    command = [sys.executable, str(Path(__file__).resolve()), "child", kind, str(rounds), arg]
    procs = [
        subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(count)
    ]
    for proc in procs:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"a {kind} child did not start")
    start = reading()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    answers = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"a {kind} child failed")
        answers.append(json.loads(out.strip().splitlines()[-1]))
    return answers, reading() - start


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "")
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", help="a PostgreSQL server URL (default: start one)")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--rounds", type=int, default=8, help="runs per slot (4 slots)")
    parser.add_argument("--statements", type=int, default=10000, help="per client process")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT), str(HERE)]
    os.environ["DURABLE_SCALEOUT_WORKER"] = "1"
    import durable_scaleout as scale
    import psycopg

    for count in [int(n) for n in args.workers.split(",")]:
        steps = count * args.rounds * RUNS_AT_ONCE * scale.STEPS
        for kind in ("plain", "sleep"):
            answers, _ = together(kind, count, args.rounds)
            cpu = sum(a["cpu_s"] for a in answers)
            line = {
                "floor": kind,
                "workers": count,
                "cpu_ms_per_step": round(cpu * 1000 / steps, 4),
                "wall_s": round(max(a["wall_s"] for a in answers), 3),
                "load": round(os.getloadavg()[0], 2),
            }
            if kind == "sleep":  # a run's 5 sleeps are its only wake-ups
                line["cpu_ms_per_wake"] = round(cpu * 1000 / (steps / scale.STEPS * scale.CALLS), 4)
            print(json.dumps(line), flush=True)
    with scale.server(args.postgres) as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS floor_rows (id serial PRIMARY KEY, v int)")
        postmaster = scale.postmaster_of(url)
        for count in [int(n) for n in args.workers.split(",")]:
            for kind in ("select", "insert"):
                answers, pg = together(
                    kind, count, args.statements, url, lambda: scale.server_cpu(postmaster)
                )
                total = count * args.statements
                line = {
                    "floor": f"pg_{kind}",
                    "workers": count,
                    "pg_cpu_ms_per_statement": round(pg * 1000 / total, 4),
                    "client_cpu_ms_per_statement": round(
                        sum(a["cpu_s"] for a in answers) * 1000 / total, 4
                    ),
                    "load": round(os.getloadavg()[0], 2),
                }
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
