"""Starting this process's queued runs: woken by work, asleep otherwise.

DBOS's queue threads poll: each queue a process listens to is read every polling interval
(0.2 s here before), so a run enqueued to an idle worker, and a worker slot freed by a
finished run, wait for the next poll, and an idle worker spends a few percent of a core
reading empty queues. The `Dispatcher` replaces them for this library's queues (the
workers' shared queue, with the worker's limit, and each process's own, without one):

- it claims when there may be work, and only the queue that may have some: the queue
  PostgreSQL announces a queued run on (`NOTIFY` from `network.durable.queue_table`'s
  trigger, heard by a listener thread on a connection of its own), the queue of a run of its
  that ends when that queue has a limit (a slot is free: a worker with a backlog takes its
  next run at once; the process's own queue has no limit, so an ended run never sends it a
  claim that would find it empty), and every queue when it starts and when its listener
  reconnects (what was announced meanwhile);
- the claim is one statement (`QueueTable.claim`) taking at most the free slots, and each
  claimed run is started as DBOS starts a dequeued one (`execute_dequeued_workflow`, on DBOS's
  event loop);
- besides, it claims every `SAFETY_PASS` seconds (PostgreSQL), should an announcement ever be
  lost, and every `SQLITE_POLL` seconds on SQLite, which has no NOTIFY.

The limit counts a worker's runs from their claim until their network's run ends (the
workflow function returns): DBOS's recording of the outcome, a few statements after it, does
not hold the slot.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from network.durable.connections import Connections
from network.durable.queue_table import CHANNEL, QueueTable
from network.logger import get_logger

SAFETY_PASS = 10.0
"""Seconds between two claims nobody asked for, on PostgreSQL (a lost announcement)."""
SQLITE_POLL = 0.2
"""Seconds between two claims on SQLite, which cannot announce a queued run."""
LISTEN_FOR = 60.0
"""Seconds the listener waits in one go before it looks whether it should stop."""
BATCH = 64
"""Runs claimed at once from a queue without a limit."""


class Dispatcher:
    """Claims and starts the runs of this process's queues (see the module docstring)."""

    def __init__(
        self,
        db: Connections,
        queues: dict[str, int | None],
        *,
        executor_id: str,
        version: str,
        start: Callable[[list[dict[str, Any]], str], list[str]],
    ) -> None:
        """`queues`: each queue's name and its limit (None: none). `start(claimed, owner)`
        starts the claimed runs (`QueueTable.claim`'s) and returns the ids of those it could
        not start."""
        self.table = QueueTable(db)
        self.db = db
        self.queues = dict(queues)
        self.executor_id = executor_id
        self.version = version
        self._start = start
        self._running: dict[str, str] = {}  # claimed run id -> its queue
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._due: set[str] = set()  # the queues to claim at the next wake (under _lock)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.claims = 0  # claim statements sent (tests read how often it looked)

    def start(self) -> None:
        """Claim what is queued now, then serve until `stop`."""
        listen = not self.db.sqlite
        if listen:
            self.table.install_wake_trigger()
        self.wake()
        self._spawn(self._serve, "agent-network-dispatch")
        if listen:
            self._spawn(self._listen, "agent-network-listen")

    def wake(self, queue: str | None = None) -> None:
        """Claim `queue` now (None: every queue): work may be waiting."""
        with self._lock:
            self._due.update(self.queues if queue is None else [queue])
        self._wake.set()

    def finished(self, run_id: str) -> None:
        """The run `run_id` ended in this process: its slot is free."""
        with self._lock:
            queue = self._running.pop(run_id, None)
        if queue is not None and self.queues.get(queue) is not None:
            self.wake(queue)

    def running(self, queue: str) -> int:
        """This process's runs of `queue`, claimed and not ended."""
        with self._lock:
            return sum(1 for name in self._running.values() if name == queue)

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if not self.db.sqlite:
            try:  # the listener waits for the database: tell it (others ignore an empty one)
                self.db.connect_once(f"SELECT pg_notify('{CHANNEL}', '')")
            except Exception:  # a database that is gone: the listener is a daemon thread
                get_logger().debug("durable.dispatch_stop_unheard", exc_info=True)
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads = []

    def dispatch(self, queues: set[str] | None = None) -> int:
        """Claim and start what this process has room for, on `queues` (None: every queue);
        the runs started."""
        started = 0
        for queue, limit in self.queues.items():
            if queues is not None and queue not in queues:
                continue
            while not self._stop.is_set():
                room = BATCH if limit is None else limit - self.running(queue)
                if room <= 0:
                    break
                owner = str(uuid.uuid4())
                self.claims += 1
                claimed = self.table.claim(
                    queue, limit=room, executor=self.executor_id, owner=owner, version=self.version
                )
                if not claimed:
                    break
                with self._lock:
                    self._running.update((status["workflow_uuid"], queue) for status in claimed)
                failed = self._start(claimed, owner)
                for run_id in failed:
                    self.finished(run_id)
                started += len(claimed) - len(failed)
                if len(claimed) < room:
                    break
        return started

    def _serve(self) -> None:
        every = SQLITE_POLL if self.db.sqlite else SAFETY_PASS
        backoff = 0.05
        while not self._stop.is_set():
            if not self._wake.wait(timeout=every):
                self.wake()  # the safety pass (SQLite: the poll) looks at every queue
            self._wake.clear()
            if self._stop.is_set():
                return
            with self._lock:
                due, self._due = self._due, set()
            try:
                self.dispatch(due)
                backoff = 0.05
            except Exception as exc:  # a database hiccup: look again shortly
                get_logger().warning("durable.dispatch_failed", error=type(exc).__name__)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
                self.wake()

    def _listen(self) -> None:
        backoff = 0.05
        while not self._stop.is_set():
            connection = None
            try:
                connection = self.db.connect()
                connection.execute(f"LISTEN {CHANNEL}")
                self.wake()  # what was announced while nobody listened
                backoff = 0.05
                while not self._stop.is_set():
                    for notice in connection.notifies(timeout=LISTEN_FOR):
                        if notice.payload in self.queues:
                            self.wake(notice.payload)
            except Exception as exc:  # a dropped connection: listen again on a new one
                if self._stop.is_set():
                    return
                get_logger().warning("durable.listen_failed", error=type(exc).__name__)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
            finally:
                if connection is not None:
                    try:
                        connection.close()
                    except Exception:  # already broken
                        get_logger().debug("durable.listen_close_failed", exc_info=True)

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)


def start_claimed(claimed: list[dict[str, Any]], owner: str) -> list[str]:
    """Start claimed runs as DBOS starts a dequeued workflow (on its event loop); the ids it
    could not start (gone, no longer PENDING, or refused by DBOS, which then records why). A
    claim that returned ids only (SQLite) has the runs' statuses read first."""
    from dbos._core import execute_dequeued_workflow  # noqa: PLC0415 (dbos is optional and heavy)
    from dbos._dbos import _get_dbos_instance  # noqa: PLC0415 (dbos is optional and heavy)

    dbos = _get_dbos_instance()
    ids = [status["workflow_uuid"] for status in claimed]
    statuses: dict[str, Any] = {s["workflow_uuid"]: s for s in claimed if "status" in s}
    if len(statuses) < len(ids):
        statuses = {s["workflow_uuid"]: s for s in dbos._sys_db.get_workflow_statuses(ids)}
    failed = []
    for run_id in ids:
        status = statuses.get(run_id)
        if status is None or status["status"] != "PENDING":
            failed.append(run_id)
            continue
        try:
            execute_dequeued_workflow(dbos, status, owner)
        except Exception as exc:  # DBOS recorded the run as failed (its inputs, its attempts)
            get_logger().warning("durable.start_failed", run_id=run_id, error=type(exc).__name__)
            failed.append(run_id)
    return failed
