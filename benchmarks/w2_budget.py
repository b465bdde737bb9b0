"""W2's budget: what the bare loop, the leanest step that keeps our records, and we cost.

W2's target is a wall time of at most 2x the ideal 0.1 s on the default asyncio loop. Three
implementations of the same W2 run, measured the same way (`bench_common.measure_w2_once`),
interleaved, each repeat in a fresh process, under both collector settings:

- `floor`: `floor.py`'s bare loop over dicts (no records at all);
- `lean`: the leanest step that still keeps what agent-network keeps per step, written inline
  in one coroutine: the model's `AssistantMessage` and `ToolCall`, the tool's arguments and the
  state key's items validated by pydantic, one RFC 6902 op, one provenance entry, a
  `ToolCallRecord`, the `ToolMessage` in the history and the `InferenceResult`, all built with
  the library's own record classes; no router, no hooks, no savepoints, no options;
- `ours`: `ours_bench.py`'s network, the library as a user runs it.

The collector settings: `default` (as Python starts), `server` (docs/servers.md: freeze the
warm heap, raise the first threshold) and `off` (disabled: what the steps cost without it).
The gap between `lean` and `floor` is what the records alone cost; the gap between `ours` and
`lean` is what everything else the library does costs.

`--against REF` adds `ours` at a git ref (checked out into a temporary worktree, run with
the same workloads through `AGENT_NETWORK_SOURCE`), interleaved with the rest: a change's
before and after from one invocation. `--collectors` picks the collector settings to run.

    python benchmarks/w2_budget.py [--repeats 5] [--runs 1000]
    python benchmarks/w2_budget.py --against main --collectors default
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_common import W2_IDEAL_S, W2_LATENCY_S, last_json_line, log, measure_w2_once
from step_budget import checkout, remove_checkout

IMPLEMENTATIONS = ("floor", "lean", "ours")
COLLECTORS = ("default", "server", "off")


def lean_run() -> Any:
    """The `lean` run: one coroutine, the library's records, nothing optional."""
    from pydantic import TypeAdapter

    from agents import call as tool_call
    from agents.models.scripted import _message
    from network.history.messages import ToolMessage, UserMessage
    from network.history.results import InferenceResult, ToolCallRecord, Usage

    arguments = TypeAdapter(dict[str, str])  # what the tool's argument model checks
    items = TypeAdapter(list[str])  # what the state key's item type checks
    usage = Usage()

    async def model(history: list[Any]) -> Any:
        await asyncio.sleep(W2_LATENCY_S)
        return _message(None, [tool_call("append_item", item=f"item-{len(history)}")])

    async def run(n: int) -> int:
        data: dict[str, Any] = {"target": n}
        writes: list[tuple[Any, ...]] = []  # provenance: key, what, when, by whom
        history: list[Any] = [UserMessage(f"Append {n} items.")]
        results: list[InferenceResult] = []
        while len(data.get("items", ())) < data["target"]:
            started_at, started = time.time(), time.perf_counter()
            message = await model(history)
            message.name = "worker"
            records, ops = [], []
            for call in message.tool_calls:
                item = arguments.validate_python(call.arguments)["item"]
                added = items.validate_python([item])
                current = data.get("items")
                if current is None:
                    data["items"] = added
                    ops.append({"op": "add", "path": "/items", "value": list(added)})
                else:
                    current.extend(added)
                    ops.append({"op": "add", "path": "/items/-", "value": item})
                writes.append(("items", "set", time.time(), "worker", len(results), call.id))
                records.append(
                    ToolCallRecord(call.id, call.name, call.arguments, "ok", "ok", False)
                )
            took = (time.perf_counter() - started) * 1000
            results.append(
                InferenceResult(
                    "worker",
                    "",
                    [],
                    history,
                    [message],
                    records,
                    None,
                    usage,
                    started_at,
                    took,
                    ops,
                )
            )
            history.append(message)
            history.extend(ToolMessage(r.id, r.content, r.name) for r in records)
        return len(data["items"])

    return run


def child(name: str) -> None:
    """One W2 repeat of one implementation; prints measure_w2_once's JSON line."""
    import gc
    import json

    if os.environ.get("W2_COLLECTOR") == "off":
        gc.disable()  # measure_w2_once's gc.collect() still runs; nothing collects after it
    if name == "floor":
        from floor import run_w2 as run
    elif name == "lean":
        run = lean_run()
    else:
        from ours_bench import InstantModel, make_run

        run = make_run(InstantModel(W2_LATENCY_S))
    print(json.dumps(asyncio.run(measure_w2_once(run, int(os.environ["W2_RUNS"])))), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--against", help="a git ref whose `ours` runs beside this one's")
    parser.add_argument("--collectors", default=",".join(COLLECTORS))
    parser.add_argument("--child", choices=IMPLEMENTATIONS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    collectors = args.collectors.split(",")
    if args.against is None:
        measure(args, collectors, {})
        return
    with tempfile.TemporaryDirectory() as scratch:
        base = checkout(args.against, Path(scratch) / "base")
        try:
            measure(args, collectors, {f"ours@{args.against}": str(base)})
        finally:
            remove_checkout(base)


def measure(args: argparse.Namespace, collectors: list[str], others: dict[str, str]) -> None:
    """Run the repeats and print the table; `others`: more `ours`, by name, at a checkout."""
    names = [*IMPLEMENTATIONS, *others]
    ratios: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    for repeat in range(args.repeats):
        for collector in collectors:
            for name in names:  # interleaved: a load change hits all of them alike
                env = dict(os.environ, W2_RUNS=str(args.runs))
                if name in others:  # `ours` at another checkout (ours_bench.py reads it)
                    env["AGENT_NETWORK_SOURCE"] = others[name]
                env.pop("BENCH_GC", None)
                env["W2_COLLECTOR"] = collector
                if collector == "server":
                    env["BENCH_GC"] = "server"
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", "ours" if name in others else name],
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=600,
                    check=True,
                )
                figures = last_json_line(proc.stdout)
                ratios.setdefault((name, collector), []).append(figures["wall_s"] / W2_IDEAL_S)
                cpus.setdefault((name, collector), []).append(
                    figures["cpu_s"] * 1e6 / figures["steps"]
                )
        log(f"repeat {repeat + 1} of {args.repeats} done")
    print(f"W2, {args.runs} runs x 10 steps, medians of {args.repeats} (min-max):")
    print("| collector | implementation | wall / ideal (x) | CPU per step (us) | CPU / floor's |")
    print("| --- | --- | --- | --- | --- |")
    for collector in collectors:
        floor_cpus = cpus[("floor", collector)]
        for name in names:
            r, c = ratios[(name, collector)], cpus[(name, collector)]
            # Per repeat, against the floor measured beside it: the figure a changing machine
            # speed blurs least.
            relative = [mine / floor for mine, floor in zip(c, floor_cpus, strict=True)]
            print(
                f"| {collector} | {name} | {statistics.median(r):.2f} "
                f"({min(r):.2f}-{max(r):.2f}) | {statistics.median(c):.1f} "
                f"({min(c):.1f}-{max(c):.1f}) | {statistics.median(relative):.2f} |"
            )


if __name__ == "__main__":
    main()
