"""A durable step of this checkout against one of a git ref, and against a bare DBOS step.

One process, interleaved: for each database (SQLite; PostgreSQL with `--postgres URL`) and
each N, each repetition runs, one after the other,

- `plain`: the W1-shaped network of `durable_overhead.py` (N agent calls), not durable;
- `bare`: a DBOS workflow of as many steps as that durable run records (3 N + 2), each
  `DBOS.reserve_step()` + `run_async` of an empty coroutine: DBOS's own floor;
- `before`: the durable run with `network/durable/{steps,event_log,replay_gate}.py` as they
  are at `--before REF` (default `main`), and SQLite's default rollback journal;
- `after`: the durable run with this checkout's code.

Each durable variant gets its own DBOS launch and, on SQLite, its own database file; each
timed run follows an untimed one in the same launch (a process launches once and runs many
runs: the first after a launch opens connections and compiles statements). Printed:
medians of wall time and of this process's CPU time per recorded step, overhead per step
(durable - plain) / recorded steps, and the ratio after / before. The machine's load average
is printed with each line: on a shared machine only ratios within one invocation mean much.

    python benchmarks/durable_ab.py [--postgres postgresql://...] [--repeats 7] [--before main]
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
import types
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from dbos import DBOS, SetWorkflowID  # noqa: E402
from durable_overhead import build  # noqa: E402

import network.durable.engine as engine  # noqa: E402
import network.durable.workflow as workflow  # noqa: E402
from network import durable  # noqa: E402


@DBOS.workflow(name="bench.bare_steps")
async def bare_steps(count: int) -> int:
    """`count` DBOS steps of an empty coroutine."""

    async def empty() -> int:
        return 1

    for _ in range(count):
        await DBOS.reserve_step().run_async({"name": "bare"}, empty)
    return count


def module_at(ref: str, path: str) -> types.ModuleType:
    """The module at `path` as it is at git `ref` (its imports resolve to this checkout)."""
    source = subprocess.run(
        ["git", "show", f"{ref}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType(f"before_{Path(path).stem}")
    module.__file__ = f"{ref}:{path}"
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


class Variant:
    """Which code a durable run uses (swapped into the workflow module between runs)."""

    def __init__(
        self, name: str, steps: Any, event_log: Any, gate: Any, journal: Callable[[str], None]
    ) -> None:
        self.name = name
        self.steps, self.event_log, self.gate, self.journal = steps, event_log, gate, journal

    def install(self) -> None:
        workflow.DurableSteps = self.steps
        workflow.EventLog = self.event_log
        workflow.ReplayGate = self.gate
        engine.use_write_ahead_log = self.journal


def variants(ref: str) -> list[Variant]:
    after = Variant(
        "after",
        workflow.DurableSteps,
        workflow.EventLog,
        workflow.ReplayGate,
        engine.use_write_ahead_log,
    )
    old_steps = module_at(ref, "network/durable/steps.py")
    old_log = module_at(ref, "network/durable/event_log.py").EventLog
    old_gate = module_at(ref, "network/durable/replay_gate.py").ReplayGate

    def event_log(run_id: str, **ignored: Any) -> Any:  # the old one takes no `resumed`
        return old_log(run_id)

    def gate(sinks: Any, *, is_open: bool, **ignored: Any) -> Any:  # nor `log`
        return old_gate(sinks, is_open=is_open)

    before = Variant("before", old_steps.DurableSteps, event_log, gate, lambda url: None)
    return [before, after]


async def timed(action: Callable[[], Any], steps: int) -> tuple[float, float]:
    """Per step, the wall and CPU time of `action`'s second call (the first warms the
    launch up: connections opened, statements compiled and prepared)."""
    await action()
    wall, cpu = time.perf_counter(), time.process_time()
    await action()
    return (time.perf_counter() - wall) / steps * 1000, (time.process_time() - cpu) / steps * 1000


async def one_round(db: str, calls: int, variant: Variant | None) -> dict[str, tuple[float, float]]:
    """One launch: `plain` and `bare` when `variant` is None, else that variant's durable run."""
    network = build(f"w1_{calls}", calls)
    recorded = 3 * calls + 2
    durable.launch([network], db=db)
    try:
        if variant is None:

            async def bare() -> None:
                with SetWorkflowID(f"bare-{uuid.uuid4().hex}"):
                    await bare_steps(recorded)

            return {
                "plain": await timed(lambda: network.run("go"), recorded),
                "bare": await timed(bare, recorded),
            }
        run = network.run
        return {
            variant.name: await timed(
                lambda: run("go", durable=True, run_id=f"ab-{uuid.uuid4().hex}"), recorded
            )
        }
    finally:
        durable.shutdown()


def measure(dbs: dict[str, str], calls: int, repeats: int, ref: str) -> None:
    runs = variants(ref)
    for kind, base in dbs.items():
        samples: dict[str, list[tuple[float, float]]] = {}
        for _ in range(repeats):
            for variant in [None, *runs]:
                (variant or runs[-1]).install()  # the floor: DBOS as this checkout sets it up
                db = base(variant.name if variant is not None else "floor")
                for name, sample in asyncio.run(one_round(db, calls, variant)).items():
                    samples.setdefault(name, []).append(sample)
        runs[-1].install()
        wall = {name: statistics.median(s[0] for s in got) for name, got in samples.items()}
        cpu = {name: statistics.median(s[1] for s in got) for name, got in samples.items()}
        line = {
            "db": kind,
            "agent_calls": calls,
            "recorded_steps": 3 * calls + 2,
            "wall_ms_per_step": {name: round(value, 3) for name, value in wall.items()},
            "cpu_ms_per_step": {name: round(value, 3) for name, value in cpu.items()},
            "overhead_ms_per_step": {
                name: round(wall[name] - wall["plain"], 3) for name in ("bare", "before", "after")
            },
            "after_over_before": round(
                (wall["after"] - wall["plain"]) / (wall["before"] - wall["plain"]), 2
            ),
            "load_average": [round(load, 2) for load in os.getloadavg()],
        }
        print(json.dumps(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres", help="a PostgreSQL server URL (new databases are made)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--before", default="main", help="the git ref to compare against")
    parser.add_argument("--calls", default="10,100", help="agent calls per run, comma-separated")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="durable-ab-"))
    dbs: dict[str, Any] = {"sqlite": lambda name: f"sqlite:///{tmp / name}.sqlite"}
    if args.postgres:
        server = args.postgres.rsplit("/", 1)[0]
        database = f"ab_{uuid.uuid4().hex[:8]}"
        dbs["postgresql"] = lambda name: f"{server}/{database}"
    for calls in (int(n) for n in args.calls.split(",")):
        measure(dbs, calls, args.repeats, args.before)


if __name__ == "__main__":
    main()
