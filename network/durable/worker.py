"""A worker process: runs the queued durable runs of its networks (`agent-network worker`).

Any number of workers on one PostgreSQL database share its queues, one per network
(`network.durable.network_queues`): a worker takes only the runs of the networks it was
given, at most `concurrency` at once in all. Like every process that launched durable runs,
a worker takes over the runs of a process that died (`network.durable.takeover`): a queued
run goes back on its network's queue, for a worker of that network. On SQLite, workers share
one machine's file.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from typing import Any

from network.durable.engine import CHECK_EVERY, check_executor_id, launch, shutdown

WORKER_PREFIX = "an-worker-"
EXECUTOR_ID_LONGEST = 100


def worker_executor_id(given: str | None) -> str:
    """The executor id of a worker given `given` (None: a new one): `an-worker-` and it, at
    most 100 characters; `DurableConfigError` naming `executor_id` for one it cannot be."""
    if given is None:
        return WORKER_PREFIX + uuid.uuid4().hex[:16]
    check_executor_id(given)  # its type and characters, as given
    if given.startswith(WORKER_PREFIX):
        return given
    check_executor_id(given, longest=EXECUTOR_ID_LONGEST - len(WORKER_PREFIX))
    return WORKER_PREFIX + given


def run_worker(
    networks: Iterable[Any],
    *,
    db: str,
    concurrency: int | None = None,
    executor_id: str | None = None,
    stop: threading.Event | None = None,
    check_every: float = CHECK_EVERY,
) -> None:
    """Serve the queues of `networks` until `stop` is set (blocks; DBOS runs the runs on its
    own threads)."""
    executor_id = worker_executor_id(executor_id)
    stop = stop or threading.Event()
    launch(  # creates the database and its tables when they do not exist yet
        networks,
        db=db,
        worker=True,
        worker_concurrency=concurrency,
        executor_id=executor_id,
        check_every=check_every,
    )
    # Only once launched: a refused launch leaves the process as it was (DBOS it launched
    # before included), and a failed one has undone itself.
    try:
        stop.wait()
    finally:
        shutdown()
