"""A stored run's four PostgreSQL statements on asyncpg against the same on libpq: client CPU.

    python benchmarks/pg_roundtrip.py [--runs N] [--rounds R] [--concurrency N] [--bare]

The statements are the PostgreSQL thread store's own, captured from it (`PostgresLink.fetch`)
during a run of `stored_run.py`'s network (one agent, three agent calls): the load, then one
commit per agent call, with their parameters. They are then replayed, unchanged but for the
thread and the revision and record counts each one reads (taken from the answer before it, as
the store does), on two drivers:

- `asyncpg`: `connection.fetch(sql, *arguments)`, as `PostgresLink` sends them (arrays and
  rows in asyncpg's binary form, its statement cache);
- `libpq`: psycopg's libpq handle (`pgconn`), as `network.threads.pg_wire.Connection` sends
  them (prepared once per connection, executed by name, the socket watched by the loop for as
  long as the connection lives, parameters and results in PostgreSQL's binary form, written
  and read in Python). Before that module, this script carried the same code as a prototype;
  `--against`-style comparisons of the store itself are `stored_run.py`'s.

`--bare` replaces each statement by `SELECT $1::int` (one parameter, one row): the round trips
alone. Each figure is a fresh process (a child of this script) on a thread of its own, the two
drivers' children alternating; per round one of each. CPU ms per run (four statements) of the
process, medians over `--rounds`. `--concurrency N`: N runs at once, each on its own thread
and connection. Nothing is asserted. See benchmarks/README.md, "PostgreSQL's round trips on
libpq".
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DRIVERS = ("asyncpg", "libpq")
BARE = "SELECT $1::int"


def capture(url: str, lanes: int) -> dict[str, Any]:
    """The store's statements for one run (the load and three commits), and `2 * lanes`
    threads that exist (a set per driver)."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))
    from stored_run import three_calls

    from network import ThreadRef
    from network.threads import SQLStore
    from network.threads.sql_links import PostgresLink

    seen: list[tuple[str, tuple[Any, ...]]] = []
    fetch = PostgresLink.fetch

    async def captured(self: Any, sql: str, *arguments: Any) -> list[Any]:
        seen.append((sql, arguments))
        return await fetch(self, sql, *arguments)

    async def main() -> list[tuple[str, tuple[Any, ...]]]:
        store = SQLStore(url)
        network = three_calls()
        threads = [f"{driver}-{lane}" for driver in DRIVERS for lane in range(lanes)]
        for thread in threads:
            await network.run("go", thread=ThreadRef(thread, store=store))
        PostgresLink.fetch = captured  # type: ignore[method-assign]
        await network.run("go", thread=ThreadRef(threads[0], store=store))
        PostgresLink.fetch = fetch  # type: ignore[method-assign]
        await store.close()
        return list(seen)

    statements = asyncio.run(main())
    assert len(statements) == 4, [sql[:60] for sql, _ in statements]
    return {"statements": [[sql, list(arguments)] for sql, arguments in statements]}


async def replay(driver: str, url: str, plan: dict[str, Any], lanes: int, runs: int) -> float:
    """CPU seconds per run of `runs` runs, `lanes` at a time, each on its thread."""
    sys.path.insert(0, str(ROOT))
    from network.threads.pg_wire import Connection

    plain = url.replace("postgresql+asyncpg://", "postgresql://")
    connections: list[Any] = []
    for _ in range(lanes):
        if driver == "asyncpg":
            import asyncpg

            connections.append(await asyncpg.connect(plain))
        else:
            connections.append(await Connection.open(plain))
    statements = plan["statements"]
    bare = plan.get("bare", False)

    async def lane(index: int, count: int) -> None:
        connection = connections[index]
        fetch = connection.fetch
        thread = f"{driver}-{index}"
        load_sql, load_arguments = statements[0]
        if bare:
            for _ in range(count):
                for number in range(4):
                    await fetch(BARE, number)
            return
        row = (await fetch(load_sql, thread, 0, 0, 0))[0]
        counts = row[6], row[7]  # what the process holds: all, as the store's cache does
        for _ in range(count):
            row = (await fetch(load_sql, thread, *counts, load_arguments[3]))[0]
            revision = row[3]
            for sql, arguments in statements[1:]:
                done = await fetch(sql, thread, revision, *arguments[2:])
                assert done, "a stale commit"
                counts, revision = tuple(done[0]), revision + 1

    async def all_lanes(count: int) -> None:
        await asyncio.gather(*(lane(index, count // lanes) for index in range(lanes)))

    await all_lanes(max(lanes, runs // 5))  # warm-up: caches, prepared statements
    measured = runs // lanes * lanes
    started = time.process_time()
    await all_lanes(measured)
    cpu = time.process_time() - started
    for connection in connections:
        await connection.close()
    return cpu / measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--bare", action="store_true", help="SELECT $1::int instead")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        driver, url, plan_file, lanes, runs = args.child
        plan = json.loads(Path(plan_file).read_text())
        print(json.dumps(asyncio.run(replay(driver, url, plan, int(lanes), int(runs)))))
        return
    sys.path.insert(0, str(ROOT))
    from tests.network.threads.postgres import postgres_server

    with postgres_server() as url, tempfile.TemporaryDirectory() as scratch:
        plan = capture(url, args.concurrency)
        plan["bare"] = args.bare
        plan_file = Path(scratch, "plan.json")
        plan_file.write_text(json.dumps(plan))
        samples: dict[str, list[float]] = {driver: [] for driver in DRIVERS}
        for round_ in range(args.rounds):
            for driver in DRIVERS if round_ % 2 == 0 else DRIVERS[::-1]:
                command = [sys.executable, __file__, "--child", driver, url, str(plan_file)]
                command += [str(args.concurrency), str(args.runs)]
                done = subprocess.run(command, capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    raise SystemExit(f"{driver} failed:\n{done.stderr[-3000:]}")
                samples[driver].append(float(done.stdout.strip().splitlines()[-1]) * 1000)
    medians = {driver: statistics.median(values) for driver, values in samples.items()}
    print(json.dumps({"medians_ms": medians, "samples_ms": samples}))
    what = "4 x SELECT $1::int" if args.bare else "the store's load and 3 commits"
    print(
        f"\nCPU ms a run ({what}; medians of {args.rounds} processes x {args.runs} runs,"
        f" {args.concurrency} at a time): asyncpg {medians['asyncpg']:.3f},"
        f" libpq {medians['libpq']:.3f}, saved {medians['asyncpg'] - medians['libpq']:.3f}"
        f" ({medians['libpq'] / medians['asyncpg']:.2f}x)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
