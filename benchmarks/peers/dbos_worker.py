"""Bare DBOS doing what a durable run of `durable_scaleout.py` records: the peer it is set against.

One workflow of 17 `@DBOS.step`s, the steps of a 5-call agent run (a first step, then per call
a router decision, a model call that sleeps 50 ms and a tool call, then the router's last
decision), on a DBOS queue whose per-worker limit is 4, polled every 0.2 s (DBOS's default
is 1 s). Runs in the project's environment: DBOS is the `durable` extra's dependency.

    python benchmarks/peers/dbos_worker.py setup URL CONCURRENCY          # the queue
    python benchmarks/peers/dbos_worker.py serve URL EXECUTOR CONCURRENCY # a worker
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from typing import Any

from dbos import DBOS, DBOSClient

APP = "dbos-scaleout"
QUEUE = "scaleout"
WORKFLOW = "bench.scaleout"
CALLS = 5
SLEEP = float(os.environ.get("DURABLE_SCALEOUT_SLEEP", "0.05"))
POLL = float(os.environ.get("DBOS_SCALEOUT_POLL", "0.2"))


@DBOS.step()
async def begin() -> bool:
    return True


@DBOS.step()
async def route(calls: int) -> str | None:
    return "worker" if calls < CALLS else None


@DBOS.step()
async def model(calls: int) -> dict[str, Any]:
    await asyncio.sleep(SLEEP)
    return {"tool": "note", "arguments": {"item": "x"}, "call": calls}


@DBOS.step()
async def note(items: list[str], item: str) -> list[str]:
    return [*items, item]


@DBOS.workflow(name=WORKFLOW)
async def run(message: str) -> dict[str, Any]:
    await begin()
    items: list[str] = []
    calls = 0
    while await route(calls) is not None:
        answer = await model(calls)
        items = await note(items, answer["arguments"]["item"])
        calls += 1
    return {"output": "ok", "items": items}


def configure(url: str, executor: str | None = None) -> None:
    config: dict[str, Any] = {
        "name": APP,
        "system_database_url": url,
        "application_version": "bench-1",
        "log_level": "WARNING",
    }
    if executor is not None:
        config["executor_id"] = executor
    DBOS(config=config)  # type: ignore[arg-type]


def setup(url: str, concurrency: int) -> None:
    """The system database and its queue (before any worker or client)."""
    DBOS.migrate(url)
    client = DBOSClient(system_database_url=url, application_name=APP)
    client.register_queue(QUEUE, worker_concurrency=concurrency, polling_interval_sec=POLL)
    client.destroy()


def serve(url: str, executor: str, concurrency: int) -> None:
    configure(url, executor)
    DBOS.listen_queues([QUEUE])
    DBOS.launch()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    DBOS.destroy(destroy_registry=False)


class BareClient:
    """DBOS's own client enqueueing the workflow."""

    def __init__(self, url: str) -> None:
        self.client = DBOSClient(system_database_url=url, application_name=APP)

    def enqueue(self) -> str:
        options: Any = {"workflow_name": WORKFLOW, "queue_name": QUEUE}
        handle = self.client.enqueue(options, "go")
        workflow_id: str = handle.get_workflow_id()
        return workflow_id

    def close(self) -> None:
        self.client.destroy()


if __name__ == "__main__":
    if sys.argv[1] == "setup":
        setup(sys.argv[2], int(sys.argv[3]))
    else:
        serve(sys.argv[2], sys.argv[3], int(sys.argv[4]))
