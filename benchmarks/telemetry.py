"""W1's per-step cost with OpenTelemetry tracing off, on a no-op SDK, and exporting in memory.

The W1 network of `ours_bench.py` (one agent, one tool call per step appending to a state
list, a code router), run to N steps with:

- off: no provider given and none installed (opentelemetry is never imported: the baseline);
- sdk-noop: the SDK's TracerProvider and MeterProvider with no span processor and no metric
  reader (spans and metrics are built, then dropped);
- sdk-memory: the SDK with a SimpleSpanProcessor into an InMemorySpanExporter and an
  InMemoryMetricReader (every span kept and every metric recorded; what a test sees).

Not a test: timings depend on the machine. Prints one JSON line: wall and CPU (process time,
steadier on a shared machine) µs per step. `--off-only` measures the baseline alone, so the
same script can compare two checkouts before and after a change.

    python benchmarks/telemetry.py [--steps 100] [--repeats 15] [--off-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ours_bench import InstantModel, build  # also filters structlog to WARNING


def _variants() -> tuple[dict[str, Any], Any]:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from network.telemetry import Telemetry

    memory = TracerProvider()
    exporter = InMemorySpanExporter()
    memory.add_span_processor(SimpleSpanProcessor(exporter))
    return {
        "off": None,
        "sdk-noop": Telemetry(tracer_provider=TracerProvider(), meter_provider=MeterProvider()),
        "sdk-memory": Telemetry(
            tracer_provider=memory,
            meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]),
        ),
    }, exporter


async def _per_step(telemetry: Any, steps: int) -> tuple[float, float]:
    """(wall, CPU) µs per step of one W1 run of `steps` steps."""
    network = build(InstantModel())
    if telemetry is not None:
        network.telemetry = telemetry
    wall, cpu = time.perf_counter(), time.process_time()
    result = await network.run(f"Append {steps} items.", state={"target": steps})
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert len(result["items"]) == steps
    return wall / steps * 1e6, cpu / steps * 1e6


async def main(steps: int, repeats: int, off_only: bool) -> dict[str, Any]:
    await _per_step(None, steps)  # warm-up, and proof that "off" imports nothing
    assert not any(m.startswith("opentelemetry") for m in sys.modules), "off must not import"
    variants, exporter = ({"off": None}, None) if off_only else _variants()
    wall: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    for telemetry in variants.values():  # warm-up of each
        await _per_step(telemetry, steps)
    for _ in range(repeats):
        for name, telemetry in variants.items():  # interleaved, so drift hits all alike
            took_wall, took_cpu = await _per_step(telemetry, steps)
            wall[name].append(took_wall)
            cpu[name].append(took_cpu)
            if exporter is not None:
                exporter.clear()
    return {
        "steps": steps,
        "repeats": repeats,
        "wall_us_per_step_median": {k: round(statistics.median(v), 1) for k, v in wall.items()},
        "cpu_us_per_step_median": {k: round(statistics.median(v), 1) for k, v in cpu.items()},
        "cpu_us_per_step_min": {k: round(min(v), 1) for k, v in cpu.items()},
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--off-only", action="store_true", help="only the baseline (any tree)")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.steps, args.repeats, args.off_only))))
