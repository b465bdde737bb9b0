"""The per-step budget: instructions one agent step costs, counted by valgrind's callgrind.

Instruction counts are what a shared, loaded machine does not blur, so a change to the hot path
(the agent step, the run loop, the store's writes) is judged by them: W1 and W2 may move by
noise, never by more than 3% per step. Each figure is a process that runs the workload minus
the same process that only warms up, divided by the steps run:

- W1: one run of N = 1000 steps in process (the scripted model answers at once), after a
  warm-up and a full collection (the same in every process: see `W1_CHILD`);
- W2: 500 runs of 10 steps at once, the model sleeping 10 ms a call, with docs/servers.md's
  collector settings (`w2_instructions.py`);
- W2d: the same batch with the collector as Python starts it (its default thresholds), where
  the collector's passes over the runs alive at once are part of every step's cost (not in
  the default `--workloads`: W2's budget is the server settings').

    python benchmarks/step_budget.py                 # this checkout
    python benchmarks/step_budget.py --against main  # and a git ref, side by side, with ratios
    python benchmarks/step_budget.py --against f178e9b --against main --jobs 4
    python benchmarks/step_budget.py --against main --workloads w2,w2d

`--against` (repeatable) checks each ref out into a temporary worktree and counts it the same
way, in the same invocation; `--jobs` runs that many callgrind processes at once (the counts
do not depend on it, only the wall time does). Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUDGET = 0.03  # the most a step may cost more than the ref's, in instructions

W1_STEPS = 1000
W2_RUNS = 500

# W1's child, the same script for this checkout and every `--against` ref. The collector's
# full collection after the warm-up puts both of a figure's processes (and every ref's) at the
# same start: without it, whether one full pass over the whole heap (imports included, ~700
# instructions a step at N = 1000) lands inside the measured steps depends on how many objects
# the imports and the warm-up happened to allocate, not on the step. The steps' own
# collections still count.
W1_CHILD = """
import gc
import sys
sys.path.insert(0, {bench!r})
sys.path.insert(0, {root!r})
import anyio
from ours_bench import InstantModel, make_run
run = make_run(InstantModel())
async def main(steps):
    await run(20)  # warm caches (schemas, adapters) first
    gc.collect()  # the same collector state for every process (see above)
    if steps:
        await run(steps)
anyio.run(main, int(sys.argv[1]))
"""


def instructions(root: Path, workload: str, size: int) -> int:
    """Instructions (callgrind's `Collected`) of one process running `workload` at `size`."""
    if workload == "w1":
        script = W1_CHILD.format(bench=str(root / "benchmarks"), root=str(root))
        command = [sys.executable, "-c", script, str(size)]
    else:  # w2: the server settings; w2d: the collector's default thresholds
        collector = "default" if workload == "w2d" else "server"
        # this checkout's batch script for every ref, on the ref's library (`ours_bench.py`
        # reads AGENT_NETWORK_SOURCE), as `w2_budget.py --against` runs it
        command = [sys.executable, str(HERE / "w2_instructions.py"), str(size), collector]
    environment = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(root)}
    environment["AGENT_NETWORK_SOURCE"] = str(root)
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", *command],
            capture_output=True,
            text=True,
            env=environment,
            cwd=root / "benchmarks",
            check=True,
        )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def per_step(root: Path, workload: str, pool: ThreadPoolExecutor) -> float:
    """Instructions per step of `workload` in the checkout at `root` (its two processes run
    in `pool`)."""
    size, steps = (W1_STEPS, W1_STEPS) if workload == "w1" else (W2_RUNS, W2_RUNS * 10)
    counted = pool.submit(instructions, root, workload, size)
    bare = pool.submit(instructions, root, workload, 0)
    return (counted.result() - bare.result()) / steps


def checkout(ref: str, into: Path) -> Path:
    """`ref` checked out into a temporary worktree at `into` (`remove_checkout` ends it)."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), ref],
        check=True,
        capture_output=True,
    )
    return into


def remove_checkout(into: Path) -> None:
    """The temporary worktree `checkout` made, removed."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(into)],
        check=False,
        capture_output=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--against", action="append", default=[], help="a git ref to count side by side"
    )
    parser.add_argument("--workloads", default="w1,w2")
    parser.add_argument("--jobs", type=int, default=1, help="callgrind processes at once")
    args = parser.parse_args()
    workloads = args.workloads.split(",")
    with tempfile.TemporaryDirectory() as scratch:
        bases = [checkout(ref, Path(scratch) / f"base{i}") for i, ref in enumerate(args.against)]
        try:
            roots = [ROOT, *bases]
            # `pool` runs the callgrind processes, `jobs` at once; each figure waits for its
            # two processes in a thread of its own (never in `pool`, which it would block)
            with (
                ThreadPoolExecutor(max(1, args.jobs)) as pool,
                ThreadPoolExecutor(len(roots) * len(workloads)) as figures,
            ):
                futures = {
                    (root, workload): figures.submit(per_step, root, workload, pool)
                    for workload in workloads
                    for root in roots
                }
                _print_table(workloads, args.against, bases, futures)
        finally:
            for base in bases:
                remove_checkout(base)


def _print_table(workloads: list[str], refs: list[str], bases: list[Path], futures: Any) -> None:
    print("| workload | this checkout |" + "".join(f" {ref} | ratio |" for ref in refs))
    print("| --- | --- |" + " --- | --- |" * len(refs))
    for workload in workloads:
        ours = futures[(ROOT, workload)].result()
        cells = [f"{ours:,.0f}"]
        for base in bases:
            theirs = futures[(base, workload)].result()
            ratio = ours / theirs
            verdict = "" if ratio <= 1 + BUDGET else f" (over the {BUDGET:.0%} budget)"
            cells += [f"{theirs:,.0f}", f"{ratio:.3f}{verdict}"]
        print(f"| {workload} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
