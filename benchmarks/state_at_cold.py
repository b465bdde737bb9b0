"""`state_at` as the first read of a thread in a new process, on SQLite and PostgreSQL.

`time_travel.py` measures a cold `state_at` with a fresh store inside its own process (its
imports and statement caches warm); this runs each read in a process of its own, as a new
server worker or a CLI would: the thread of N agent calls (default 10,000, built as
`time_travel.py` builds it) is written once, then every repeat starts a Python process that
opens the store, connects (one query for a missing thread, not counted), and times one
`state_at`. Figures (milliseconds, medians over the repeats, wall time):

- `random`: at a checkpoint picked at random (the same seeded picks on every store);
- `first` / `middle` / `last`: at checkpoint 0, N/2 and N-1.

    python benchmarks/state_at_cold.py [--calls N] [--repeats R] [--no-postgres]
        [--against DIR]    # also measure the agent-network checkout in DIR, interleaved

`--against` measures another checkout (an earlier revision: a before/after) on the same
databases, each of its samples taken right after this checkout's. One JSON line on stdout; a
Markdown table on stderr. Figures are not asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def child(library: str, url: str, checkpoint: int) -> None:
    """In a new process: connect, then time one `state_at`; print milliseconds."""
    sys.path.insert(0, library)
    import anyio

    from network.threads import SQLStore

    async def read() -> float:
        async with SQLStore(url, create_tables=False) as store:
            await store.get_thread("absent")  # connected (and the engine set up): not counted
            start = time.perf_counter()
            state = await store.state_at("long", checkpoint)
            took = (time.perf_counter() - start) * 1000
            assert state is not None and state.checkpoint.index == checkpoint
            return took

    print(anyio.run(read))


def cold_ms(library: str, url: str, checkpoint: int) -> float:
    command = [sys.executable, __file__, "--child", library, url, str(checkpoint)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def measure(libraries: dict[str, str], url: str, calls: int, repeats: int) -> dict[str, Any]:
    """Medians per library (by label) and checkpoint; the samples interleaved, so that a
    change in the machine's load blurs every figure alike."""
    picks = random.Random(1)
    positions = {"first": 0, "middle": calls // 2, "last": calls - 1}
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):
        chosen = {"random": picks.randrange(calls), **positions}
        for name, checkpoint in chosen.items():
            for label, library in libraries.items():
                taken = cold_ms(library, url, checkpoint)
                samples.setdefault((label, name), []).append(taken)
    figures: dict[str, Any] = {}
    for (label, name), values in samples.items():
        figures.setdefault(label, {})[name] = round(statistics.median(values), 1)
    print(json.dumps(figures), file=sys.stderr)
    return figures


def build(url: str, calls: int) -> None:
    import anyio

    sys.path.insert(0, str(HERE))
    from time_travel import build as build_thread

    from network.threads import SQLStore

    async def write() -> None:
        options: dict[str, Any] = {"sqlite_synchronous": "NORMAL"} if "sqlite" in url else {}
        async with SQLStore(url, **options) as store:
            await build_thread(store, "long", calls)

    anyio.run(write)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--against", help="another agent-network checkout to measure too")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    libraries = {"this": str(ROOT)}
    if options.against:
        libraries["against"] = os.path.abspath(options.against)
    results: dict[str, Any] = {"calls": options.calls, "repeats": options.repeats}
    with ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory())
        urls = {"sqlite": f"sqlite+aiosqlite:///{Path(folder) / 'threads.db'}"}
        if not options.no_postgres:
            from tests.network.threads.postgres import postgres_server

            urls["postgres"] = stack.enter_context(postgres_server())
        for name, url in urls.items():
            build(url, options.calls)
            results[name] = measure(libraries, url, options.calls, options.repeats)
    print(json.dumps(results))
    stores = [name for name in ("sqlite", "postgres") if name in results]
    print(f"\n{options.calls:,}-call thread, first state_at in a new process, ms", file=sys.stderr)
    print(f"(median of {options.repeats})", file=sys.stderr)
    columns = [(store, label) for store in stores for label in libraries]
    header = " | ".join(f"{store} {label}" for store, label in columns)
    print(f"| checkpoint | {header} |", file=sys.stderr)
    print("|---" * (len(columns) + 1) + "|", file=sys.stderr)
    for row in ("random", "first", "middle", "last"):
        cells = [str(results[store][label][row]) for store, label in columns]
        print(f"| {row} | " + " | ".join(cells) + " |", file=sys.stderr)


if __name__ == "__main__":
    main()
