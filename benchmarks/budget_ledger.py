"""The shared budget ledger's cost per model request, on each store.

    python benchmarks/budget_ledger.py [--requests 200] [--postgres-url URL]

Two figures per store, medians of `--requests` requests, wall time and the benchmarking
process's CPU time (all its threads; not a database server's):

- **ledger**: one request's reservation and settlement alone (`BudgetAccount.reserve`, then
  `settle`: two transactions on SQL), the budget holding plenty of room;
- **run step**: one agent call (one model request answered at once by an in-process model,
  no tool) with and without a `SharedBudget` on that store; the difference is what the
  budget adds to a step, the request's token estimate included.

SQLite runs with the store's default `synchronous=FULL` (each transaction waits for the
disk); PostgreSQL, when no `--postgres-url` is given, is a throwaway server started as the
tests start theirs (fsync off). One JSON line on stdout; a Markdown table on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents import Agent, ScriptedModel  # noqa: E402
from network import Network, SharedBudget  # noqa: E402
from network.run.budgets.account import BudgetAccount  # noqa: E402
from network.threads import MemoryStore, SQLStore  # noqa: E402
from network.threads.ledgers import ledger_of  # noqa: E402


def timed(samples: list[tuple[float, float]]) -> dict[str, float]:
    """Median wall and CPU milliseconds of `(wall, cpu)` seconds samples."""
    return {
        "wall_ms": statistics.median(wall for wall, _ in samples) * 1000,
        "cpu_ms": statistics.median(cpu for _, cpu in samples) * 1000,
    }


async def ledger_only(store: Any, requests: int) -> dict[str, float]:
    budget = SharedBudget(f"bench:{uuid.uuid4().hex[:8]}", max_tokens=10**15, store=store)
    assert budget.key is not None
    account = BudgetAccount(budget, budget.key, ledger_of(store))
    held = await account.reserve(100, 0.0)  # the key's row and the tables exist first
    await account.settle(held, 1, 0.0, 1)
    samples = []
    for _ in range(requests):
        wall, cpu = time.perf_counter(), time.process_time()
        held = await account.reserve(500, 0.0)
        await account.settle(held, 120, 0.0, 1)
        samples.append((time.perf_counter() - wall, time.process_time() - cpu))
    return timed(samples)


async def run_steps(store: Any, requests: int, budgeted: bool) -> dict[str, float]:
    model = ScriptedModel(lambda request: "ok")
    network = Network("bench", agents=[Agent("a", model=model, params={"max_tokens": 64})])
    budget = SharedBudget(f"bench:{uuid.uuid4().hex[:8]}", max_tokens=10**15, store=store)
    options: dict[str, Any] = {"budget": budget} if budgeted else {}
    await network.run("warm up", **options)
    samples = []
    for _ in range(requests):
        wall, cpu = time.perf_counter(), time.process_time()
        await network.run("a question of a few words", **options)
        samples.append((time.perf_counter() - wall, time.process_time() - cpu))
    return timed(samples)


async def measure(stores: dict[str, Any], requests: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for name, store in stores.items():
        figures[name] = {
            "ledger": await ledger_only(store, requests),
            "step_plain": await run_steps(store, requests, budgeted=False),
            "step_budgeted": await run_steps(store, requests, budgeted=True),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--postgres-url", help="a PostgreSQL server to use (else one is started)")
    options = parser.parse_args()
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as scratch:
        url = options.postgres_url
        if url is None:
            from tests.network.threads.postgres import postgres_server

            url = stack.enter_context(postgres_server())

        async def go() -> dict[str, Any]:
            async with (
                SQLStore(f"sqlite+aiosqlite:///{scratch}/ledger.db") as sqlite,
                SQLStore(url) as postgres,
            ):
                stores = {"memory": MemoryStore(), "sqlite": sqlite, "postgresql": postgres}
                return await measure(stores, options.requests)

        figures = anyio.run(go)
    print(json.dumps(figures))
    print("| store | ledger wall ms | ledger CPU ms | step wall ms (plain / budgeted) | "
          "step CPU ms (plain / budgeted) |", file=sys.stderr)  # fmt: skip
    print("| --- | --- | --- | --- | --- |", file=sys.stderr)
    for name, row in figures.items():
        ledger, plain, budgeted = row["ledger"], row["step_plain"], row["step_budgeted"]
        print(
            f"| {name} | {ledger['wall_ms']:.2f} | {ledger['cpu_ms']:.2f} | "
            f"{plain['wall_ms']:.2f} / {budgeted['wall_ms']:.2f} | "
            f"{plain['cpu_ms']:.2f} / {budgeted['cpu_ms']:.2f} |",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
