"""The per-step budget: instructions one agent step costs, counted by valgrind's callgrind.

Instruction counts are what a shared, loaded machine does not blur, so a change to the hot path
(the agent step, the run loop, the store's writes) is judged by them: W1 and W2 may move by
noise, never by more than 3% per step. Each figure is a process that runs the workload minus
the same process that only warms up, divided by the steps run:

- W1: one run of N = 1000 steps in process (the scripted model answers at once);
- W2: 500 runs of 10 steps at once, the model sleeping 10 ms a call, with docs/servers.md's
  collector settings (`w2_instructions.py`).

    python benchmarks/step_budget.py                 # this checkout
    python benchmarks/step_budget.py --against main  # and a git ref, side by side, with ratios

`--against` checks the ref out into a temporary worktree and counts it the same way, in the
same invocation. Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUDGET = 0.03  # the most a step may cost more than the ref's, in instructions

W1_STEPS = 1000
W2_RUNS = 500

W1_CHILD = """
import sys
sys.path.insert(0, {bench!r})
sys.path.insert(0, {root!r})
import anyio
from ours_bench import InstantModel, make_run
run = make_run(InstantModel())
async def main(steps):
    await run(20)  # warm caches (schemas, adapters) first
    if steps:
        await run(steps)
anyio.run(main, int(sys.argv[1]))
"""


def instructions(root: Path, workload: str, size: int) -> int:
    """Instructions (callgrind's `Collected`) of one process running `workload` at `size`."""
    if workload == "w1":
        script = W1_CHILD.format(bench=str(root / "benchmarks"), root=str(root))
        command = [sys.executable, "-c", script, str(size)]
    else:
        command = [sys.executable, str(root / "benchmarks" / "w2_instructions.py"), str(size)]
    environment = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(root)}
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


def per_step(root: Path, workload: str) -> float:
    size, steps = (W1_STEPS, W1_STEPS) if workload == "w1" else (W2_RUNS, W2_RUNS * 10)
    return (instructions(root, workload, size) - instructions(root, workload, 0)) / steps


def checkout(ref: str, into: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), ref],
        check=True,
        capture_output=True,
    )
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="a git ref to count side by side (e.g. main)")
    parser.add_argument("--workloads", default="w1,w2")
    args = parser.parse_args()
    workloads = args.workloads.split(",")
    with tempfile.TemporaryDirectory() as scratch:
        base = checkout(args.against, Path(scratch) / "base") if args.against else None
        try:
            print("| workload | this checkout | " + (f"{args.against} | ratio |" if base else ""))
            print("| --- | --- | " + ("--- | --- |" if base else ""))
            for workload in workloads:
                ours = per_step(ROOT, workload)
                if base is None:
                    print(f"| {workload} | {ours:,.0f} |")
                    continue
                theirs = per_step(base, workload)
                ratio = ours / theirs
                verdict = "" if ratio <= 1 + BUDGET else f" (over the {BUDGET:.0%} budget)"
                print(f"| {workload} | {ours:,.0f} | {theirs:,.0f} | {ratio:.3f}{verdict} |")
        finally:
            if base is not None:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                    check=False,
                    capture_output=True,
                )


if __name__ == "__main__":
    main()
