"""Runs on the shared queue of earlier versions, moved to their network's queue.

Earlier versions queued every run on one queue, `agent-network`, whatever its network
(`network.durable.network_queues.SHARED_QUEUE`). A database they used may still hold runs
there: enqueued before the upgrade, by a client not upgraded yet, or put back there by an
older worker's takeover. Nothing in such a run's row names its network (only its inputs,
pickled, do), so no claim statement can tell whose it is. A worker of this version moves
them instead (`LegacyQueue.move`): it lists their ids (one read, which finds none on a
database this version alone has used), reads their networks from their inputs through
DBOS, and moves each network's runs to that network's queue in one statement that moves
only a run still ENQUEUED on the shared queue: a run an older worker claimed meanwhile
stays its (its row lock makes the move wait, then skip it), so no run is taken twice. On
PostgreSQL the same statement announces the moved runs on their new queue (a move keeps a
run ENQUEUED, which the wake trigger does not announce), so the workers of their network
claim them at once.

A worker moves them when it starts, when a run is announced on the shared queue, when it
listens anew, and every `network.durable.dispatch.SAFETY_PASS` seconds (on SQLite too,
which announces nothing). A run whose network cannot be read (its inputs are not this
library's) is left where it is, and not read again by this process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from network.durable.connections import Connections
from network.durable.network_queues import SHARED_QUEUE, network_queue
from network.durable.process import network_of
from network.durable.queue_table import CHANNEL
from network.logger import get_logger

BATCH = 500
"""Runs moved in one pass at most (the next pass moves the rest)."""


def networks_from_dbos(run_ids: list[str]) -> dict[str, str | None]:
    """Each run's network, read from its inputs through DBOS (launched in this process)."""
    from dbos import DBOS  # noqa: PLC0415 (dbos is optional and heavy)

    listed = DBOS.list_workflows(workflow_ids=run_ids, load_input=True, load_output=False)
    return {info.workflow_id: network_of(info) for info in listed}


class LegacyQueue:
    """Moves the runs of the earlier shared queue to their networks' queues (see the module
    docstring), on one system database."""

    def __init__(
        self,
        db: Connections,
        networks_of: Callable[[list[str]], dict[str, str | None]] = networks_from_dbos,
    ) -> None:
        self.db = db
        self.networks_of = networks_of
        self.unreadable: set[str] = set()  # runs whose network could not be read: left
        status, p = db.table("workflow_status"), db.mark
        self._list = (
            f"SELECT workflow_uuid FROM {status} WHERE queue_name = {p('shared')} "
            "AND status = 'ENQUEUED' "
            f"AND (application_name = {p('app')} OR application_name IS NULL) "
            f"ORDER BY priority, created_at LIMIT {BATCH}"
        )
        ids = "IN (SELECT value FROM json_each(:ids))" if db.sqlite else "= ANY(%(ids)s)"
        move = (
            f"UPDATE {status} SET queue_name = {p('to')} WHERE workflow_uuid {ids} "
            f"AND status = 'ENQUEUED' AND queue_name = {p('shared')} RETURNING workflow_uuid"
        )
        if db.sqlite:
            self._move = move
        else:  # announced in the moving transaction, as the wake trigger announces
            self._move = (
                f"WITH moved AS ({move}) "
                f"SELECT workflow_uuid, pg_notify('{CHANNEL}', {p('to')}) FROM moved"
            )

    def move(self) -> list[str]:
        """Move what waits on the shared queue (blocking: call from a thread); the queues
        runs were moved to."""
        moved_to: list[str] = []
        while True:
            listed = [
                row[0]
                for row in self.db.execute(
                    self._list, {"shared": SHARED_QUEUE, "app": self.db.app_name}
                )
            ]
            waiting = [run_id for run_id in listed if run_id not in self.unreadable]
            if not waiting:
                return moved_to
            by_network: dict[str, list[str]] = {}
            networks = self.networks_of(waiting)
            for run_id in waiting:
                network = networks.get(run_id)
                if network is None:
                    self.unreadable.add(run_id)
                    get_logger().warning("durable.queued_run_without_network", run_id=run_id)
                else:
                    by_network.setdefault(network, []).append(run_id)
            for network, run_ids in by_network.items():
                queue = network_queue(network)
                ids: Any = json.dumps(run_ids) if self.db.sqlite else run_ids
                moving = {"to": queue, "ids": ids, "shared": SHARED_QUEUE}
                rows = self.db.execute(self._move, moving)
                if rows:
                    moved_to.append(queue)
                    get_logger().info("durable.queued_runs_moved", network=network, runs=len(rows))
            if len(listed) < BATCH:
                return moved_to
