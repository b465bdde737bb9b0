"""One W2 batch in process, for counting its instructions with valgrind's callgrind.

Instruction counts are what a shared, loaded machine does not blur. Count a batch of R runs
and the same process with no batch, and divide the difference by R x 10 steps:

    valgrind --tool=callgrind python benchmarks/w2_instructions.py 500 server   # -> Ir(500)
    valgrind --tool=callgrind python benchmarks/w2_instructions.py 0 server     # -> Ir(0)
    # (Ir(500) - Ir(0)) / 5000 = instructions per W2 step

Twenty warm-up runs come first (caches, schemas, adapters), then a full collection, in both
processes (as `bench_common.measure_w2_once` does before its batch). `server` then applies
docs/servers.md's collector settings; `default` leaves the thresholds as Python starts them.
The model sleeps 10 ms per call, as in `ours_bench.py`'s W2.
"""

from __future__ import annotations

import asyncio
import gc
import sys

from ours_bench import InstantModel, make_run


async def batch(runs: int, collector: str) -> None:
    run = make_run(InstantModel(0.01))
    await asyncio.gather(*(run(10) for _ in range(20)))
    gc.collect()
    if collector == "server":
        gc.freeze()
        gc.set_threshold(50_000, 20, 100)
    if runs:
        await asyncio.gather(*(run(10) for _ in range(runs)))


if __name__ == "__main__":
    asyncio.run(batch(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "server"))
