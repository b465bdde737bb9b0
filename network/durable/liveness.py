"""Which workers are alive, and taking over the runs of those that are not (PostgreSQL).

Each worker holds a PostgreSQL advisory lock named after its executor id for as long as its
database session lives; the server releases it when the process dies, SIGKILL included. A
worker that sees unfinished runs of another worker tries that worker's lock: when it gets it,
the other is gone, and DBOS re-enqueues that worker's runs (once: its recovery moves each run
from the dead executor atomically), for any worker to resume from its last recorded step.
PostgreSQL is the only shared component: no heartbeat table, no coordinator.
"""

from __future__ import annotations

from typing import Any

WORKER_PREFIX = "an-worker-"


def _lock_key(executor_id: str) -> str:
    return f"agent-network-worker:{executor_id}"


class Liveness:
    """This worker's lock, and the check of the others'."""

    def __init__(self, url: str, executor_id: str) -> None:
        import psycopg  # noqa: PLC0415 (dbos brings psycopg; only workers need it)

        self.executor_id = executor_id
        self._conn: Any = psycopg.connect(url, autocommit=True)
        self._conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (_lock_key(executor_id),))

    def is_dead(self, executor_id: str) -> bool:
        """True when no live worker holds `executor_id`'s lock (it is then held here briefly)."""
        key = _lock_key(executor_id)
        row = self._conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()
        if not row or not row[0]:
            return False
        self._conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
        return True

    def recover_dead(self) -> list[str]:
        """Re-enqueue the unfinished runs of dead workers; returns their executor ids."""
        from dbos import DBOS  # noqa: PLC0415 (dbos is optional and heavy)

        pending = DBOS.list_workflows(status="PENDING", load_input=False, load_output=False)
        others = {
            info.executor_id
            for info in pending
            if info.executor_id
            and info.executor_id.startswith(WORKER_PREFIX)
            and info.executor_id != self.executor_id
        }
        dead = [executor for executor in sorted(others) if self.is_dead(executor)]
        if dead:
            DBOS._recover_pending_workflows(dead)  # DBOS's own recovery, by executor id
        return dead

    def close(self) -> None:
        """Release the lock (the process is leaving on purpose)."""
        self._conn.close()
