"""Durable scale-out: queue throughput with 1, 2, 4 and 8 worker processes, against bare DBOS
doing the same steps and against ideal, and the recovery time after a kill -9.

The run: 5 agent calls, each a model call that sleeps 50 ms (the model is the bottleneck) and
asks for one tool call, and a code router: 17 recorded steps (the run's first step, and per
agent call a router decision, a model call and a tool call, and the router's last decision).
Each worker runs at most 4 runs at once (`--concurrency 4`). Variants, each in its own worker
processes on its own fresh database of one PostgreSQL server:

- `ours`: `agent-network worker` of this checkout;
- `before`: the same at git revision `--before REF` (`git archive` of network/, agents/,
  routers/; this script's network file);
- `dbos`: bare DBOS (`benchmarks/peers/dbos_worker.py`): a workflow of the same 17 steps
  (`@DBOS.step`s: the model step sleeps 50 ms), on a DBOS queue with the same per-worker
  limit, polled every 0.2 s (`--dbos-poll`; DBOS's default is 1 s).

Per variant and number of workers W:

- throughput: `--rounds` x 4 x W runs enqueued at once (one transaction, so the enqueue's
  own cost, measured apart, is not in the figure); wall time from its commit to the last
  run's end (its `updated_at` in the database); ideal = rounds x 5 x 50 ms (every slot busy
  all the time), ratio = ideal / wall (1.0: the model alone sets the pace);
- CPU per recorded step: the worker processes' CPU time plus PostgreSQL's (the server's
  processes: the postmaster, its backends, and its reaped children) over the batch, divided by
  the batch's recorded steps;
- step statements per run: the transactions that wrote the batch's recorded steps (its rows
  of DBOS's step table, counted by transaction id), divided by its runs (bare DBOS: its two
  transactions a step, of which one writes the row); write statements per run: the same
  with the transactions that wrote the runs' event-log rows (DBOS's stream table) too;
- idle: a worker's CPU while it waits for work (% of one core, over `--idle-s` seconds);
- wake: how long a run enqueued to idle workers waits to start (`started_at_epoch_ms -
  created_at`, median of 5).

Then, once per variant: the enqueue's cost (the client's CPU and wall time per enqueue, and
PostgreSQL's CPU, against DBOS's own `DBOSClient.enqueue` of a workflow with the same inputs),
and recovery: 4 workers, 16 runs in flight, the worker holding the most of them killed with
SIGKILL in the middle of its runs; the time from the kill until each of its runs ended on
another worker (bare DBOS leaves them PENDING: no live process recovers another's runs).

Not a test: timings depend on the machine. Prints one JSON line per figure, then a summary
line (`{"durable_scaleout": ...}`) that `run_all.py` renders.

    python benchmarks/durable_scaleout.py [--postgres URL] [--before REF] [--workers 1,2,4,8]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from revisions import export_revision

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CALLS = 5
STEPS = 3 * CALLS + 2
SLEEP = float(os.environ.get("DURABLE_SCALEOUT_SLEEP", "0.05"))
CONCURRENCY = 4
NETWORK = "scaleout"
DBOS_WORKER = HERE / "peers" / "dbos_worker.py"
MAX_CONNECTIONS = 500
"""The started server's connection limit: a worker holds about a dozen connections (its DBOS
pool, its steps', its listener, its lock), so eight reach PostgreSQL's default of 100."""


if os.environ.get("DURABLE_SCALEOUT_WORKER"):
    # The network the workers serve (`agent-network worker FILE:scaleout`), from whichever
    # checkout PYTHONPATH names.
    from agents import Agent, ScriptedModel, ToolContext, call, tool
    from network import Network

    @tool
    def note(item: str, ctx: ToolContext) -> str:
        """Note an item."""
        ctx.state.kv.set("items", [item])
        return "ok"

    async def answer(request: Any) -> Any:
        await asyncio.sleep(SLEEP)
        return call("note", item="x")

    def route(ctx: Any) -> Any:
        return "worker" if ctx.call_count < CALLS else None

    scaleout = Network(
        NETWORK,
        agents=[Agent("worker", system="Work.", tools=[note], model=ScriptedModel(answer))],
        router=route,
        state_schema={"items": {"type": list[str]}},
    )


# -- measuring processes ---------------------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def process_cpu(pid: int, *, children: bool = False) -> float:
    """CPU seconds of process `pid` (all its threads; `children`: plus its reaped children)."""
    fields = _stat(pid)
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICK


def server_cpu(postmaster: int) -> float:
    """CPU seconds of a PostgreSQL server: the postmaster, its reaped children and live ones."""
    total = process_cpu(postmaster, children=True)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = _stat(int(entry))
            if int(fields[1]) == postmaster:
                total += (int(fields[11]) + int(fields[12])) / TICK
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
    return total


def postmaster_of(db: str) -> int:
    """The local PostgreSQL server's postmaster: the parent of this connection's backend."""
    import psycopg

    with psycopg.connect(db, autocommit=True) as conn:
        (backend,) = conn.execute("SELECT pg_backend_pid()").fetchone()  # type: ignore[misc]
        with open(f"/proc/{backend}/status") as f:  # read while the backend lives
            for line in f:
                if line.startswith("PPid:"):
                    return int(line.split()[1])
    raise RuntimeError("no postmaster found")


# -- the variants' workers and clients -------------------------------------------------------


class Variant:
    """How one variant's workers start and its runs are enqueued."""

    def __init__(self, name: str, source: Path | None) -> None:
        self.name = name
        self.source = source  # the library's tree (None: bare DBOS)

    def env(self) -> dict[str, str]:
        env = dict(os.environ, DURABLE_SCALEOUT_WORKER="1", PYTHONDONTWRITEBYTECODE="1")
        env["PYTHONPATH"] = str(self.source if self.source is not None else ROOT)
        return env

    def worker_command(self, db: str, executor: str) -> list[str]:
        if self.source is None:
            return [sys.executable, str(DBOS_WORKER), "serve", db, executor, str(CONCURRENCY)]
        target = f"{Path(__file__).resolve()}:{NETWORK}"
        return [
            sys.executable, "-m", "network.cli", "worker", target, "--db", db,
            "--concurrency", str(CONCURRENCY), "--executor-id", executor,
        ]  # fmt: skip

    def queue(self) -> str:
        """The queue this variant's workers take the network's runs from: its own queue
        (`network.durable.network_queues`, read from the variant's tree), or the one shared
        queue of the versions before it."""
        assert self.source is not None
        names = self.source / "network" / "durable" / "network_queues.py"
        if not names.exists():
            return "agent-network"
        spec = importlib.util.spec_from_file_location("variant_network_queues", names)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        queue: str = module.network_queue(NETWORK)
        return queue

    def helper(self, *args: str) -> dict[str, Any]:
        """Run this script's `client` mode in the variant's environment: its JSON answer."""
        command = [sys.executable, str(Path(__file__).resolve()), "client", self.name, *args]
        done = subprocess.run(
            command, env=self.env(), cwd=tempfile.gettempdir(), capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"{self.name} client failed:\n{done.stderr[-3000:]}")
        answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return answer


class Batch:
    """Puts runs on a variant's queue in one transaction: all there at once, the workers told
    once (the enqueue's own cost is measured apart, `cost`). Its connections are opened
    first, so that a measured window holds only the runs' work."""

    def __init__(self, variant: Variant, db: str) -> None:
        import sqlalchemy
        from dbos import DBOSClient

        if variant.source is None:
            sys.path.insert(0, str(DBOS_WORKER.parent))
            import dbos_worker

            app, self.args = dbos_worker.APP, ("go",)
            self.options: Any = {
                "workflow_name": dbos_worker.WORKFLOW,
                "queue_name": dbos_worker.QUEUE,
            }
        else:  # a durable run's inputs (`network.durable.runs.run_request`), as data
            request = dict.fromkeys(
                ("state", "max_iter", "thread_id", "user_id", "app_name", "store")
            )
            app, self.args = "agent-network", (NETWORK, {"input": "go", **request})
            self.options = {"workflow_name": "agent_network.run", "queue_name": variant.queue()}
        self.client = DBOSClient(system_database_url=db, application_name=app)
        self.engine = sqlalchemy.create_engine(db.replace("postgresql://", "postgresql+psycopg://"))
        with self.engine.connect():  # opened before any window
            pass

    def enqueue(self, count: int) -> tuple[list[str], float]:
        """`count` runs; their ids, and the time the transaction committed."""
        with self.engine.begin() as conn:
            ids = [
                self.client.enqueue_in_transaction(conn, self.options, *self.args).workflow_id
                for _ in range(count)
            ]
        return ids, time.time()

    def close(self) -> None:
        self.client.destroy()
        self.engine.dispose()


def client_main(variant: str, action: str, db: str, count: str, postmaster: str) -> None:
    """In the variant's environment: make the tables (`setup`), or measure the cost of
    `count` enqueues through the variant's own client (`cost`)."""
    n = int(count)
    if variant == "dbos":
        sys.path.insert(0, str(DBOS_WORKER.parent))
        from dbos_worker import BareClient

        client: Any = BareClient(db)
    else:
        from network import durable

        # the tables are made once (`setup`): no migration inside a measured window
        ours = durable.DurableClient(db, migrate=action == "setup")

        class Ours:
            def enqueue(self) -> str:
                return ours.enqueue(NETWORK, "go")

            def close(self) -> None:
                ours.close()

        client = Ours()
    if action == "setup":
        client.close()
        print(json.dumps({"ready": True}))
        return
    for _ in range(20):  # warm: connections opened, statements prepared
        client.enqueue()
    pm = int(postmaster)
    pg0, cpu0, wall0 = server_cpu(pm), time.process_time(), time.perf_counter()
    for _ in range(n):
        client.enqueue()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    pg = server_cpu(pm) - pg0
    client.close()
    print(
        json.dumps(
            {
                "enqueue_wall_ms": round(wall / n * 1000, 3),
                "enqueue_cpu_ms": round(cpu / n * 1000, 3),
                "enqueue_pg_cpu_ms": round(pg / n * 1000, 3),
            }
        )
    )


class Workers:
    """W worker processes of a variant on database `db`."""

    def __init__(self, variant: Variant, db: str, count: int) -> None:
        self.variant = variant
        self.db = db
        self.names = [f"w{i}-{uuid.uuid4().hex[:6]}" for i in range(count)]
        self.logs = Path(tempfile.mkdtemp(prefix="scaleout-"))
        self.procs = [
            subprocess.Popen(
                variant.worker_command(db, name),
                env=variant.env(),
                cwd=self.logs,
                stdout=subprocess.DEVNULL,
                stderr=open(self.logs / f"{name}.err", "w"),  # noqa: SIM115
            )
            for name in self.names
        ]

    def cpu(self) -> float:
        return sum(process_cpu(p.pid) for p in self.procs)

    def executors(self) -> list[str]:
        """The executor ids the workers run under (ours prefix theirs)."""
        if self.variant.source is None:
            return self.names
        return [f"an-worker-{name}" for name in self.names]

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class Database:
    """Reads of DBOS's workflow table (the runs' statuses and times)."""

    def __init__(self, db: str) -> None:
        import psycopg

        self.conn = psycopg.connect(db, autocommit=True)

    def rows(self, ids: list[str]) -> list[tuple[Any, ...]]:
        return self.conn.execute(
            "SELECT workflow_uuid, status, executor_id, created_at, started_at_epoch_ms, "
            "updated_at FROM dbos.workflow_status WHERE workflow_uuid = ANY(%s)",
            (ids,),
        ).fetchall()

    def connections(self) -> int:
        """The server's sessions on this database, this reader's own left out."""
        row = self.conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        ).fetchone()
        return int(row[0]) if row else 0

    def step_statements(self, ids: list[str]) -> int:
        """The transactions that wrote the runs' recorded steps: the rows of one statement
        share its transaction id (`xmin`)."""
        row = self.conn.execute(
            "SELECT count(DISTINCT (workflow_uuid, xmin::text)) FROM dbos.operation_outputs "
            "WHERE workflow_uuid = ANY(%s)",
            (ids,),
        ).fetchone()
        return int(row[0]) if row else 0

    def write_statements(self, ids: list[str]) -> int:
        """The transactions that wrote the runs' recorded steps or their event-log rows."""
        row = self.conn.execute(
            "SELECT count(*) FROM (SELECT workflow_uuid, xmin::text FROM dbos.operation_outputs "
            "WHERE workflow_uuid = ANY(%s) UNION SELECT workflow_uuid, xmin::text "
            "FROM dbos.streams WHERE workflow_uuid = ANY(%s)) AS written",
            (ids, ids),
        ).fetchone()
        return int(row[0]) if row else 0

    def pending(self) -> list[tuple[Any, ...]]:
        """The id and executor of every running run."""
        return self.conn.execute(
            "SELECT workflow_uuid, executor_id FROM dbos.workflow_status WHERE status = 'PENDING'"
        ).fetchall()

    def wait(
        self, ids: list[str], timeout: float, every: float = 0.02
    ) -> list[tuple[Any, ...]] | None:
        """The runs' rows once all ended (None after `timeout` seconds). Times come from the
        rows, not from this loop: `every` (the look's period, which PostgreSQL's CPU figure
        includes) only sets how soon the end is seen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = self.rows(ids)
            if len(rows) == len(ids) and all(r[1] in ("SUCCESS", "ERROR") for r in rows):
                bad = [r for r in rows if r[1] != "SUCCESS"]
                if bad:
                    raise RuntimeError(f"runs failed: {bad[:3]}")
                return rows
            time.sleep(every)
        return None

    def close(self) -> None:
        self.conn.close()


def new_database(server: str) -> str:
    """A new, empty database on the server (its URL)."""
    import psycopg

    name = f"scaleout_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{server.rsplit('/', 1)[0]}/{name}"


def setup(variant: Variant, url: str) -> None:
    """The system database's tables (and bare DBOS's queue), before any worker or client."""
    if variant.source is None:
        subprocess.run(
            [sys.executable, str(DBOS_WORKER), "setup", url, str(CONCURRENCY)], check=True
        )
    else:
        variant.helper("setup", url, "0", "0")


def warm_up(workers: Workers, db: Database, batch: Batch) -> None:
    """Until every worker has run a run: connections open, statements prepared (eight
    workers launching at once on a busy machine take a while)."""
    deadline = time.monotonic() + 600
    seen: set[str] = set()
    while set(workers.executors()) - seen:
        if time.monotonic() > deadline:
            raise RuntimeError(f"workers never all took runs: {seen}")
        for proc in workers.procs:
            if proc.poll() is not None:
                raise RuntimeError(f"a worker exited: see {workers.logs}")
        ids, _ = batch.enqueue(CONCURRENCY * len(workers.procs))
        rows = db.wait(ids, 300, every=0.2)
        if rows is None:
            raise RuntimeError("warm-up runs did not finish")
        seen |= {r[2] for r in rows}


def measure(variant: Variant, server: str, count: int, rounds: int, idle_s: float) -> dict:
    url = new_database(server)
    setup(variant, url)
    workers = Workers(variant, url, count)
    db = batch = None
    try:
        db = Database(url)
        batch = Batch(variant, url)
        warm_up(workers, db, batch)
        postmaster = postmaster_of(url)
        time.sleep(1.5)  # the last warm-up run's tail
        c0, t0 = workers.cpu(), time.monotonic()
        time.sleep(idle_s)
        idle = (workers.cpu() - c0) / (time.monotonic() - t0) / count * 100
        waits = []
        for _ in range(5):
            ids, _ = batch.enqueue(1)
            (row,) = db.wait(ids, 30) or [None]
            assert row is not None
            waits.append(row[4] - row[3])
            time.sleep(0.3)
        runs = rounds * CONCURRENCY * count
        time.sleep(1)
        pg0, w0 = server_cpu(postmaster), workers.cpu()
        ids, started = batch.enqueue(runs)
        time.sleep(min(1.0, rounds * CALLS * SLEEP / 2))
        held = db.connections()
        rows = db.wait(ids, 600, every=0.5)
        assert rows is not None
        time.sleep(0.5)  # the last runs' tails, then both CPU readings
        pg, cpu = server_cpu(postmaster) - pg0, workers.cpu() - w0
        statements = db.step_statements(ids)
        writes = db.write_statements(ids)
        wall = max(r[5] for r in rows) / 1000 - started
        ideal = rounds * CALLS * SLEEP
        steps = runs * STEPS
        per_executor = {}
        for r in rows:
            per_executor[r[2]] = per_executor.get(r[2], 0) + 1
        return {
            "variant": variant.name,
            "workers": count,
            "runs": runs,
            "wall_s": round(wall, 3),
            "ideal_s": round(ideal, 3),
            "ratio_of_ideal": round(ideal / wall, 3),
            "runs_per_s": round(runs / wall, 1),
            "cpu_ms_per_step": round((cpu + pg) * 1000 / steps, 3),
            "worker_cpu_ms_per_step": round(cpu * 1000 / steps, 3),
            "pg_cpu_ms_per_step": round(pg * 1000 / steps, 3),
            "idle_cpu_pct_per_worker": round(idle, 2),
            "wake_ms": statistics.median(waits),
            "connections_per_worker": round(held / count, 1),
            "step_statements_per_run": round(statements / runs, 2),
            "write_statements_per_run": round(writes / runs, 2),
            "runs_per_worker": sorted(per_executor.values()),
            "load": round(os.getloadavg()[0], 2),
        }
    finally:
        if db is not None:
            db.close()
        if batch is not None:
            batch.close()
        workers.stop()


def recovery(variant: Variant, server: str, wait_s: float) -> dict:
    """4 workers, 16 runs in flight; the worker holding the most is killed with SIGKILL."""
    url = new_database(server)
    setup(variant, url)
    workers = Workers(variant, url, 4)
    db = batch = None
    try:
        db = Database(url)
        batch = Batch(variant, url)
        warm_up(workers, db, batch)
        time.sleep(1)
        batch.enqueue(4 * CONCURRENCY)
        deadline = time.monotonic() + 30
        victim = ""
        while not victim and time.monotonic() < deadline:  # a worker running its 4 runs
            held: dict[str, int] = {}
            for r in db.pending():
                held[r[1]] = held.get(r[1], 0) + 1
            victim = next((name for name, n in held.items() if n >= CONCURRENCY), "")
            time.sleep(0.002)
        running = [r[0] for r in db.pending() if r[1] == victim]
        if not victim:
            raise RuntimeError("no worker ever ran 4 runs at once")
        time.sleep(CALLS * SLEEP / 2)  # the middle of its runs
        proc = workers.procs[workers.executors().index(victim)]
        proc.send_signal(signal.SIGKILL)
        killed = time.time()
        proc.wait()
        lost = [r[0] for r in db.rows(running) if r[1] == "PENDING"]
        done = db.wait(lost, wait_s)
        result: dict[str, Any] = {"variant": variant.name, "runs_killed": len(lost)}
        if done is None:
            states = sorted({r[1] for r in db.rows(lost)})
            result.update(recovered=False, waited_s=wait_s, statuses=states)
        else:
            after = sorted(r[5] / 1000 - killed for r in done)
            result.update(
                recovered=True,
                recovery_s_median=round(statistics.median(after), 3),
                recovery_s_max=round(after[-1], 3),
                finished_on=sorted({r[2] for r in done}),
            )
        result["load"] = round(os.getloadavg()[0], 2)
        return result
    finally:
        if db is not None:
            db.close()
        if batch is not None:
            batch.close()
        workers.stop()


def enqueue_cost(variant: Variant, server: str, count: int) -> dict:
    url = new_database(server)
    setup(variant, url)
    answer = variant.helper("cost", url, str(count), str(postmaster_of(url)))
    return {"variant": variant.name, **answer, "load": round(os.getloadavg()[0], 2)}


# -- the invocation --------------------------------------------------------------------------


@contextlib.contextmanager
def server(url: str | None) -> Iterator[str]:
    if url:
        yield url.replace("postgresql+asyncpg://", "postgresql://")
        return
    sys.path.insert(0, str(ROOT))
    from tests.network.threads.postgres import postgres_server

    with postgres_server(max_connections=MAX_CONNECTIONS) as started:
        yield started.replace("postgresql+asyncpg://", "postgresql://")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client_main(*sys.argv[2:7])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", help="a PostgreSQL server URL (default: start one)")
    parser.add_argument("--before", default="", help="git revision measured as `before`")
    parser.add_argument(
        "--after", default="", help="git revision measured as `ours` (default: this checkout)"
    )
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--variants", default="ours,before,dbos")
    parser.add_argument("--rounds", type=int, default=8, help="runs per worker slot")
    parser.add_argument("--idle-s", type=float, default=5.0)
    parser.add_argument("--enqueues", type=int, default=300)
    parser.add_argument("--recovery-wait-s", type=float, default=30.0)
    parser.add_argument("--quick", action="store_true", help="1, 2 and 4 workers, 4 rounds")
    args, _ = parser.parse_known_args()  # run_all.py passes its own flags too
    counts = [int(n) for n in args.workers.split(",")]
    rounds = args.rounds
    if args.quick:
        counts, rounds = [n for n in counts if n <= 4], min(rounds, 4)
    variants = []
    for name in args.variants.split(","):
        if name == "ours":
            variants.append(Variant("ours", export_revision(args.after) if args.after else ROOT))
        elif name == "before" and args.before:
            variants.append(Variant(f"before ({args.before})", export_revision(args.before)))
        elif name == "dbos":
            variants.append(Variant("dbos", None))
    figures: dict[str, Any] = {"scale": [], "enqueue": [], "recovery": []}
    with server(args.postgres) as url:
        for count in counts:  # interleaved: each count sees every variant at about one load
            for variant in variants:
                line = measure(variant, url, count, rounds, args.idle_s)
                print(json.dumps(line), flush=True)
                figures["scale"].append(line)
        for variant in variants:
            line = enqueue_cost(variant, url, args.enqueues)
            print(json.dumps(line), flush=True)
            figures["enqueue"].append(line)
        for variant in variants:
            line = recovery(variant, url, args.recovery_wait_s)
            print(json.dumps(line), flush=True)
            figures["recovery"].append(line)
    figures["calls"], figures["sleep_s"], figures["concurrency"] = CALLS, SLEEP, CONCURRENCY
    figures["steps"], figures["rounds"] = STEPS, rounds
    print(json.dumps({"durable_scaleout": figures}), flush=True)


if __name__ == "__main__":
    main()
