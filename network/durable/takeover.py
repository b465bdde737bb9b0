"""Taking over the runs of processes that died, and never those of a live one.

Each process runs under its own DBOS executor id and listens to a queue of its own,
`agent-network@<executor id>` (besides its networks' queues, for a worker). A run is
held by a process while it is PENDING under its executor id, or ENQUEUED on its own queue.
At launch and then every `check_every` seconds, `Takeover.check` looks at the unfinished runs
held by other executors and, for each executor whose lock it can claim (it is dead: see
`network.durable.liveness`), moves its runs with DBOS's `resume_workflow`:

- a run from a workers' queue goes back on its network's queue
  (`network.durable.network_queues`), for a worker that serves its network (a run of the
  earlier versions' shared queue too);
- any other run goes on this process's own queue, when this process serves its network
  (it is then executed here, replaying its recorded steps), and is left for another process
  when it does not.

Launching thus never touches a run another live process holds, and a dead process's runs
are taken over by one live process (the one holding its lock while it moves them).

The look every `check_every` seconds is one statement on this process's own connections
(`network.durable.connections`): the executors holding unfinished runs, and, on PostgreSQL,
only those whose lock nobody holds (`pg_locks`), so a look that finds every holder alive costs
one read and nothing more. DBOS's listing (several statements built by SQLAlchemy) is read only
for a dead executor's runs, under its lock.

DBOS's own recovery (`recover_pending_workflows`) is not used: it recovers every run of an
executor id, onto DBOS's internal queue, which every process listens to, including one that
does not serve the run's network. A resumed run starts its recovery count anew (DBOS's
`resume_workflow` resets it).
"""

from __future__ import annotations

import threading
from typing import Any

from network.durable.connections import Connections
from network.durable.liveness import Claim, Liveness, lock_key
from network.durable.network_queues import is_workers_queue, network_queue
from network.durable.process import network_of
from network.logger import get_logger

PRIVATE_PREFIX = "agent-network@"


def private_queue(executor_id: str) -> str:
    """The queue only the process `executor_id` listens to."""
    return PRIVATE_PREFIX + executor_id


def holder_of(info: Any) -> str | None:
    """The executor id of the process holding an unfinished run, if any holds it."""
    if info.status == "PENDING":
        return info.executor_id or None
    queue = info.queue_name or ""
    if info.status == "ENQUEUED" and queue.startswith(PRIVATE_PREFIX):
        return queue[len(PRIVATE_PREFIX) :]
    return None  # waiting on a workers' queue: a worker of its network takes it


class Takeover:
    """This process's watch over the runs of the others (one per launched process)."""

    def __init__(
        self,
        liveness: Liveness,
        networks: dict[str, Any],
        *,
        workflow_name: str,
        db: Connections | None = None,
    ) -> None:
        """`db`: the system database's connections (set before `start`)."""
        self.liveness = liveness
        self.db = db
        self.networks = networks  # the engine's: networks added by a later launch count too
        self.workflow_name = workflow_name
        self.queue = private_queue(liveness.executor_id)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self) -> list[str]:
        """Move the runs of dead executors (see the module docstring); the run ids moved."""
        moved: list[str] = []
        for holder in self.suspects():
            with self.liveness.claim(holder) as claim:
                if claim is not None:
                    moved += self._move(claim)
        return moved

    def suspects(self) -> list[str]:
        """The other executors holding unfinished runs that may be dead (one statement)."""
        assert self.db is not None, "Takeover.db is set at launch"
        db, p = self.db, self.db.mark
        status = db.table("workflow_status")
        holders = (
            f"SELECT executor_id AS holder FROM {status} WHERE status = 'PENDING' "
            f"AND name = {p('name')} AND executor_id IS NOT NULL "
            f"UNION SELECT substr(queue_name, {len(PRIVATE_PREFIX) + 1}) FROM {status} "
            f"WHERE status = 'ENQUEUED' AND name = {p('name')} AND queue_name > {p('low')} "
            f"AND queue_name < {p('high')} "
            # the range serves the index; this holds under any collation (one that ignores
            # punctuation would put the networks' queues, `agent-network:<name>`, in it)
            f"AND substr(queue_name, 1, {len(PRIVATE_PREFIX)}) = {p('low')}"
        )
        if db.sqlite:
            sql = f"SELECT holder FROM ({holders}) WHERE holder <> {p('me')}"
        else:  # not those whose lock is held: alive (see `network.durable.liveness`)
            key = f"hashtextextended({p('lock_prefix')} || holder, 0)"
            sql = (
                f"SELECT holder FROM ({holders}) AS held WHERE holder <> {p('me')} "
                "AND NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' "
                "AND granted AND objsubid = 1 AND database = (SELECT oid FROM pg_database "
                "WHERE datname = current_database()) "
                f"AND classid::bigint = ({key} >> 32) & 4294967295 "
                f"AND objid::bigint = {key} & 4294967295)"
            )
        rows = db.execute(
            sql,
            {
                "name": self.workflow_name,
                "me": self.liveness.executor_id,
                "low": PRIVATE_PREFIX,
                "high": PRIVATE_PREFIX[:-1] + chr(ord(PRIVATE_PREFIX[-1]) + 1),
                "lock_prefix": lock_key(""),
            },
        )
        return sorted({row[0] for row in rows if row[0]})

    def _move(self, claim: Claim) -> list[str]:
        """Move the dead executor's runs; listed under its lock, so none moves twice."""
        from dbos import DBOS  # noqa: PLC0415 (dbos is optional and heavy)

        dead = claim.executor_id
        unfinished = DBOS.list_workflows(
            status=["PENDING", "ENQUEUED"], name=self.workflow_name, load_output=False
        )
        moved, left = [], 0
        for info in unfinished:
            if holder_of(info) != dead:
                continue  # another's, or waiting on a workers' queue
            network = network_of(info)
            if is_workers_queue(info.queue_name):  # for the workers of its network only
                queue = info.queue_name if network is None else network_queue(network)
                DBOS.resume_workflow(info.workflow_id, queue_name=queue)
            elif network in self.networks:
                DBOS.resume_workflow(info.workflow_id, queue_name=self.queue)
            else:
                left += 1  # another process, serving its network, takes it
                continue
            moved.append(info.workflow_id)
            get_logger().info(
                "durable.run_taken_over",
                run_id=info.workflow_id,
                network=network,
                dead_executor=dead,
                executor=self.liveness.executor_id,
            )
        claim.emptied = not left
        return moved

    def start(self, check_every: float) -> None:
        """Check now, then every `check_every` seconds on a thread, until `stop`."""
        self.check()
        self._thread = threading.Thread(
            target=self._watch, args=(check_every,), name="agent-network-takeover", daemon=True
        )
        self._thread.start()

    def _watch(self, check_every: float) -> None:
        while not self._stop.wait(check_every):
            try:
                self.check()
            except Exception as exc:  # a database hiccup: the next check tries again
                get_logger().warning("durable.takeover_failed", error=type(exc).__name__)

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()
