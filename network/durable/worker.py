"""A worker process: runs durable runs from the shared queue (`agent-network worker`).

Any number of workers on one PostgreSQL database share the queue; each runs at most
`concurrency` runs at once. A worker resumes the runs of a worker that died (see
`network.durable.liveness`). On SQLite, workers share one machine's file and a dead worker's
runs wait until a worker with its executor id starts again.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from typing import Any

from network.durable.engine import launch, shutdown, system_database_url
from network.durable.liveness import WORKER_PREFIX, Liveness


def run_worker(
    networks: Iterable[Any],
    *,
    db: str,
    concurrency: int | None = None,
    executor_id: str | None = None,
    stop: threading.Event | None = None,
    check_every: float = 0.5,
) -> None:
    """Serve the queue until `stop` is set (blocks; DBOS runs the runs on its own threads)."""
    url = system_database_url(db)
    executor_id = executor_id or f"{WORKER_PREFIX}{uuid.uuid4().hex[:12]}"
    if not executor_id.startswith(WORKER_PREFIX):
        executor_id = WORKER_PREFIX + executor_id
    stop = stop or threading.Event()
    liveness = None
    try:
        launch(  # creates the database and its tables when they do not exist yet
            networks,
            db=url,
            worker=True,
            worker_concurrency=concurrency,
            executor_id=executor_id,
        )
        # Taken after launch, which resumes this executor's own runs: a peer that recovers
        # them too in between is harmless, DBOS hands each run to one runner.
        liveness = Liveness(url, executor_id) if url.startswith("postgresql") else None
        while not stop.wait(check_every):
            if liveness is not None:
                liveness.recover_dead()
    finally:
        shutdown()
        if liveness is not None:
            liveness.close()
