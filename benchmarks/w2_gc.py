"""Where W2's time goes: one batch of concurrent runs, with the garbage collector's passes timed.

Runs `ours_bench.py`'s network on W2 (1,000 runs of 10 agent calls at once, 10 ms per model
call) once, in this process, after the same warmup, and prints the batch's wall time and CPU
time per step, then per collector generation the number of passes, their CPU time and what
they freed. Also: the tracked objects alive before the batch.

`--scanned` also counts, per generation, the objects each pass examined (the tracked objects of
the generations it collects, counted when it starts): a figure a loaded machine does not blur,
unlike the CPU times, which the counting itself then inflates.

    python benchmarks/w2_gc.py [--runs 1000] [--gc default|server|off] [--loop asyncio|uvloop]
                               [--scanned]

`--gc server` is docs/servers.md's recipe (`gc.freeze()`, `gc.set_threshold(50_000, 20, 100)`);
`--gc off` disables the collector for the batch (what the step costs without it).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_common import W2_LATENCY_S, W2_STEPS, W2_WARMUP_RUNS
from ours_bench import InstantModel, make_run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--gc", choices=("default", "server", "off"), default="default")
    p.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
    p.add_argument("--scanned", action="store_true", help="count the objects each pass examines")
    args = p.parse_args()
    passes = {generation: [0, 0.0, 0] for generation in range(3)}  # count, CPU s, freed
    scanned = dict.fromkeys(range(3), 0)
    started = [0.0]

    def timed(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            if args.scanned:  # what the pass will examine: its generation and the younger ones
                younger = range(info["generation"] + 1)
                scanned[info["generation"]] += sum(len(gc.get_objects(g)) for g in younger)
            started[0] = time.process_time()
            return
        entry = passes[info["generation"]]
        entry[0] += 1
        entry[1] += time.process_time() - started[0]
        entry[2] += info["collected"]

    async def batch() -> None:
        run = make_run(InstantModel(W2_LATENCY_S))
        await asyncio.gather(*(run(W2_STEPS) for _ in range(W2_WARMUP_RUNS)))
        gc.collect()
        if args.gc == "server":
            gc.freeze()
            gc.set_threshold(50_000, 20, 100)
        elif args.gc == "off":
            gc.disable()
        print(f"tracked objects before the batch: {len(gc.get_objects()):,}")
        gc.callbacks.append(timed)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        done = await asyncio.gather(*(run(W2_STEPS) for _ in range(args.runs)))
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        gc.callbacks.remove(timed)
        assert all(items == W2_STEPS for items in done)
        steps = args.runs * W2_STEPS
        print(
            f"wall {wall:.3f} s ({wall / (W2_STEPS * W2_LATENCY_S):.2f}x ideal), "
            f"CPU {cpu * 1e6 / steps:.1f} us per step"
        )
        for generation, (count, spent, freed) in passes.items():
            print(
                f"  generation {generation}: {count} passes, {spent * 1e3:.1f} ms CPU "
                f"({spent * 1e6 / steps:.1f} us per step), freed {freed} objects"
                + (f", {scanned[generation] / steps:.1f} examined per step" if args.scanned else "")
            )

    if args.loop == "uvloop":
        import uvloop

        uvloop.run(batch())
    else:
        asyncio.run(batch())


if __name__ == "__main__":
    main()
