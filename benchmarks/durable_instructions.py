"""Instructions per durable step, this checkout against a git ref, counted with callgrind.

CPU time per step (`durable_scaleout.py`) scatters by 10 to 30% between invocations on a
shared machine; instruction counts do not. Each variant's durable runs (the scale-out's run:
5 agent calls, a 50 ms model made instant, 17 recorded steps) run in one process, 4 at a
time, on a database of their own on one PostgreSQL server, under valgrind's callgrind with a
file per thread. Each process runs 3 warm-up rounds, then `--low` or `--high` rounds of 4
runs; the difference between the two, divided by the steps between them, is the cost of a
step with its share of its run's start and end (DBOS's workflow start and outcome, the
event log's last write), without the process's start. Reported per step: the instructions of
the thread the runs execute on (the process's main thread: its event loop), and of all
threads (DBOS's executors, the event log's flusher and announcer, DBOS's listener: these
vary with wall time, which valgrind stretches, so read them loosely). `--plain` adds the
same runs without durability, the floor of that thread. PostgreSQL's own work is not counted
(another process).

Variants run in turns, `--repeats` times each:

    python benchmarks/durable_instructions.py --against 651edc7 [--repeats 2] [--plain]

Not a test: valgrind makes each process about 50 times slower (a minute or two each).
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from revisions import export_revision

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNS_AT_ONCE = 4
WARM_ROUNDS = 3


def child(db: str, rounds: int, durable_runs: bool) -> None:
    """In the measured process (PYTHONPATH names the variant's tree): the runs."""
    os.environ["DURABLE_SCALEOUT_WORKER"] = "1"
    os.environ["DURABLE_SCALEOUT_SLEEP"] = "0"
    sys.path.insert(0, str(HERE))
    import durable_scaleout  # the scale-out's network, from the variant's tree

    from network import durable

    network = durable_scaleout.scaleout

    async def runs() -> None:
        durable.launch([network], db=db)
        try:
            for _ in range(WARM_ROUNDS + rounds):
                await asyncio.gather(
                    *(
                        network.run("go", durable=durable_runs, run_id=uuid.uuid4().hex)
                        for _ in range(RUNS_AT_ONCE)
                    )
                )
        finally:
            durable.shutdown()

    asyncio.run(runs())


def new_database(server: str) -> str:
    import psycopg

    name = f"instructions_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{server.rsplit('/', 1)[0]}/{name}"


def start(tree: Path, server: str, rounds: int, durable_runs: bool) -> tuple[Any, Path]:
    """One process running `rounds` rounds under callgrind (a file per thread at the path)."""
    out = Path(tempfile.mkdtemp(prefix="durable-instructions-")) / "cg"
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    command = [
        "valgrind", "--tool=callgrind", "--separate-threads=yes",
        f"--callgrind-out-file={out}", sys.executable, str(Path(__file__).resolve()),
        "child", new_database(server), str(rounds), "durable" if durable_runs else "plain",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return process, out


def counted(process: Any, out: Path) -> dict[str, int]:
    """Instructions per thread of a process `start`ed (callgrind's files), once it ended."""
    if process.wait() != 0:
        raise RuntimeError(f"the measured process failed (exit {process.returncode})")
    threads = {}
    for path in glob.glob(f"{out}-*"):
        with open(path) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")):
                    threads[path.rsplit("-", 1)[1]] = int(line.split()[1])
                    break
    return threads


def per_step(tree: Path, server: str, low: int, high: int, durable_runs: bool) -> dict[str, float]:
    """Instructions per step between `low` and `high` rounds (the two processes at once)."""
    fewer, more = start(tree, server, low, durable_runs), start(tree, server, high, durable_runs)
    a, b = counted(*fewer), counted(*more)
    steps = (high - low) * RUNS_AT_ONCE * 17
    main = "01"  # the runs' thread: the process's first
    return {
        "run_thread": round((b.get(main, 0) - a.get(main, 0)) / steps),
        "all_threads": round((sum(b.values()) - sum(a.values())) / steps),
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "durable")
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="git revision measured as `before`")
    parser.add_argument("--postgres", help="a PostgreSQL server URL (default: start one)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--low", type=int, default=2, help="measured rounds, fewer")
    parser.add_argument("--high", type=int, default=22, help="measured rounds, more")
    parser.add_argument("--plain", action="store_true", help="also the runs without durability")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from durable_scaleout import server

    before = export_revision(args.against)
    variants = [("ours", ROOT, True), (f"before ({args.against})", before, True)]
    if args.plain:
        variants.append(("plain", ROOT, False))
    figures: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in variants}
    with server(args.postgres) as url:
        for repeat in range(args.repeats):
            for name, tree, durable_runs in variants if repeat % 2 == 0 else variants[::-1]:
                line: dict[str, Any] = per_step(tree, url, args.low, args.high, durable_runs)
                figures[name].append(line)
                line = {"variant": name, **line, "load": round(os.getloadavg()[0], 2)}
                print(json.dumps(line), flush=True)
    summary = {
        name: {key: statistics.median(f[key] for f in lines) for key in lines[0]}
        for name, lines in figures.items()
    }
    print(json.dumps({"durable_instructions": summary}), flush=True)


if __name__ == "__main__":
    main()
