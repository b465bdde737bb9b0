"""The native model client against the bare httpx and aiohttp floors, in one process (W3).

On a shared machine the load changes between two benchmark processes run one after the other,
and W3's figures move with it. Here the six loops (the two floors and ours, plain and
streamed) run in turns inside one process against one fake server, so each round sees the same
load; the figure is this process's CPU time per step (the server is another process), median
over the rounds.

    python benchmarks/client_ab.py [--rounds 8] [--n 10]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from pathlib import Path

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import floor
import ours_bench
from fake_openai_server import FakeOpenAIServer

from agents.models.openai_native import OpenAIModel

structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--n", type=int, default=10, help="steps per run")
    parser.add_argument("--runs", type=int, default=10, help="runs per loop per round")
    args = parser.parse_args()
    with FakeOpenAIServer() as server:
        url = server.base_url
        loops = {
            "floor": floor.make_http_run(url),
            "floor streamed": floor.make_http_run(url, stream=True),
            "aiohttp": floor.make_http_run(url, transport="aiohttp"),
            "aiohttp streamed": floor.make_http_run(url, stream=True, transport="aiohttp"),
            "native": ours_bench.make_run(OpenAIModel("openai/fake", api_base=url)),
            "native streamed": ours_bench.make_run(
                OpenAIModel("openai/fake", api_base=url, stream=True)
            ),
        }

        async def measure() -> dict[str, list[float]]:
            for run in loops.values():  # warm up: connections, caches
                for _ in range(3):
                    await run(args.n)
            cpu: dict[str, list[float]] = {name: [] for name in loops}
            for _ in range(args.rounds):
                for name, run in loops.items():
                    start = time.process_time()
                    for _ in range(args.runs):
                        assert await run(args.n) == args.n
                    steps = args.runs * args.n
                    cpu[name].append((time.process_time() - start) / steps * 1e6)
            return cpu

        cpu = asyncio.run(measure())
    medians = {name: statistics.median(values) for name, values in cpu.items()}
    for name, value in medians.items():
        print(f"{name:18} {value:8,.0f} µs CPU/step  (rounds: {[round(v) for v in cpu[name]]})")
    for floor_name in ("floor", "aiohttp"):
        print(
            f"native / {floor_name}: {medians['native'] / medians[floor_name]:.2f} plain, "
            f"{medians['native streamed'] / medians[floor_name + ' streamed']:.2f} streamed"
        )


if __name__ == "__main__":
    main()
