"""Starting this process's queued runs: woken by work, asleep otherwise.

DBOS's queue threads poll: each queue a process listens to is read every polling interval
(0.2 s here before), so a run enqueued to an idle worker, and a worker slot freed by a
finished run, wait for the next poll, and an idle worker spends a few percent of a core
reading empty queues. The `Dispatcher` replaces them for this library's queues, in lanes
(`Lane`): a worker's lane holds the queues of the networks it serves
(`network.durable.network_queues`), under the worker's limit, and each process has a lane of
its own queue, without one:

- it claims when there may be work, and only the lane that may have some: the lane of the
  queue PostgreSQL announces a queued run on (`NOTIFY` from `network.durable.queue_table`'s
  trigger, heard by a listener thread on a connection of its own; a run of a network this
  process does not serve wakes nothing), the lane of a run of its that ends when that lane
  has a limit (a slot is free: a worker with a backlog takes its next run at once; the
  process's own queue has no limit, so an ended run never sends it a claim that would find
  it empty), and every lane when it starts and when its listener reconnects (what was
  announced meanwhile);
- the claim is one statement (`QueueTable.claim`, every queue of the lane at once) taking at
  most the free slots, and each
  claimed run is started as DBOS starts a dequeued one (`execute_dequeued_workflow`, on DBOS's
  event loop);
- besides, it claims every `SAFETY_PASS` seconds (PostgreSQL), should an announcement ever be
  lost, and every `SQLITE_POLL` seconds on SQLite, which has no NOTIFY;
- a worker moves the runs left on the earlier versions' shared queue to their networks'
  queues (`network.durable.legacy_queue`) at start, when one is announced, and every
  `SAFETY_PASS` seconds.

The limit counts a worker's runs from their claim until their network's run ends (the
workflow function returns): DBOS's recording of the outcome, a few statements after it, does
not hold the slot.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from network.durable.connections import Connections
from network.durable.network_queues import SHARED_QUEUE
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


@dataclass
class Lane:
    """Queues claimed together, in one statement, under one limit: a worker's networks'
    queues under its concurrency, or a process's own queue without a limit."""

    queues: list[str]
    limit: int | None = None


class Dispatcher:
    """Claims and starts the runs of this process's queues (see the module docstring)."""

    def __init__(
        self,
        db: Connections,
        lanes: dict[str, Lane],
        *,
        executor_id: str,
        version: str,
        start: Callable[[list[dict[str, Any]], str], list[str]],
        legacy: Callable[[], list[str]] | None = None,
    ) -> None:
        """`lanes`: the queues this process claims, by lane (`Lane`). `start(claimed,
        owner)` starts the claimed runs (`QueueTable.claim`'s) and returns the ids of those it
        could not start. `legacy()`, for a worker, moves the runs of the earlier shared queue
        to their networks' queues and returns those queues
        (`network.durable.legacy_queue.LegacyQueue.move`)."""
        self.table = QueueTable(db)
        self.db = db
        self.lanes = {name: Lane(list(lane.queues), lane.limit) for name, lane in lanes.items()}
        self.executor_id = executor_id
        self.version = version
        self._start = start
        self._legacy = legacy
        self._legacy_due = legacy is not None
        self._legacy_at: float | None = None  # when the shared queue was last moved
        self._running: dict[str, str] = {}  # claimed run id -> its lane
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._due: set[str] = set()  # the lanes to claim at the next wake (under _lock)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.claims = 0  # claim statements sent (tests read how often it looked)
        self.ignored = 0  # announcements of queues this process does not serve

    def start(self) -> None:
        """Claim what is queued now, then serve until `stop`."""
        listen = not self.db.sqlite
        if listen:
            self.table.install_wake_trigger()
        self.wake()
        self._spawn(self._serve, "agent-network-dispatch")
        if listen:
            self._spawn(self._listen, "agent-network-listen")

    def serve(self, lane: str, queues: list[str]) -> None:
        """Claim `queues` in `lane` too from now on (a later `launch` added networks)."""
        with self._lock:
            served = self.lanes[lane].queues
            served += [queue for queue in queues if queue not in served]
        self.wake(lane=lane)

    def wake(self, queue: str | None = None, *, lane: str | None = None) -> None:
        """Claim the lanes that hold `queue` now (None: every lane; or the lane `lane`):
        work may be waiting. A run announced on the earlier shared queue (`SHARED_QUEUE`)
        has that queue's runs moved to their networks' queues first."""
        with self._lock:
            if lane is not None:
                self._due.add(lane)
            elif queue is None:
                self._due.update(self.lanes)
            else:
                self._due.update(name for name, held in self.lanes.items() if queue in held.queues)
            if queue == SHARED_QUEUE and self._legacy is not None:
                self._legacy_due = True
        self._wake.set()

    def finished(self, run_id: str) -> None:
        """The run `run_id` ended in this process: its slot is free."""
        with self._lock:
            lane = self._running.pop(run_id, None)
        if lane is not None and self.lanes[lane].limit is not None:
            self.wake(lane=lane)

    def running(self, lane: str) -> int:
        """This process's runs of `lane`, claimed and not ended."""
        with self._lock:
            return sum(1 for name in self._running.values() if name == lane)

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

    def dispatch(self, lanes: set[str] | None = None) -> int:
        """Claim and start what this process has room for, in `lanes` (None: every lane);
        the runs started."""
        self._move_legacy()
        started = 0
        for name, lane in self.lanes.items():
            if lanes is not None and name not in lanes:
                continue
            while not self._stop.is_set():
                room = BATCH if lane.limit is None else lane.limit - self.running(name)
                if room <= 0:
                    break
                with self._lock:
                    queues = list(lane.queues)
                owner = str(uuid.uuid4())
                self.claims += 1
                claimed = self.table.claim(
                    queues, limit=room, executor=self.executor_id, owner=owner, version=self.version
                )
                if not claimed:
                    break
                with self._lock:
                    self._running.update((status["workflow_uuid"], name) for status in claimed)
                failed = self._start(claimed, owner)
                for run_id in failed:
                    self.finished(run_id)
                started += len(claimed) - len(failed)
                if len(claimed) < room:
                    break
        return started

    def _move_legacy(self) -> None:
        """Move the earlier shared queue's runs to their networks' queues when told to (at
        start, on an announcement, on listening anew), or `SAFETY_PASS` seconds after the
        last move (SQLite announces nothing); see `network.durable.legacy_queue`."""
        if self._legacy is None:
            return
        now = time.monotonic()
        with self._lock:
            last, due = self._legacy_at, self._legacy_due
            if not due and last is not None and now - last < SAFETY_PASS:
                return
            self._legacy_due, self._legacy_at = False, now
        try:
            moved_to = self._legacy()
        except Exception:
            with self._lock:  # to be tried again at the next wake
                self._legacy_due = True
            raise
        for queue in moved_to:
            self.wake(queue)

    def _serve(self) -> None:
        every = SQLITE_POLL if self.db.sqlite else SAFETY_PASS
        backoff = 0.05
        while not self._stop.is_set():
            if not self._wake.wait(timeout=every):
                self.wake()  # the safety pass (SQLite: the poll) looks at every lane
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
                with self._lock:  # what was announced while nobody listened
                    self._legacy_due = self._legacy is not None
                self.wake()
                backoff = 0.05
                while not self._stop.is_set():
                    for notice in connection.notifies(timeout=LISTEN_FOR):
                        self.heard(notice.payload)
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

    def heard(self, queue: str) -> None:
        """A run was announced on `queue`: claim it if this process serves that queue (or
        move it, from the earlier shared queue); another network's run wakes nothing."""
        if not queue:  # `stop`'s, to its own listener
            return
        with self._lock:
            ours = any(queue in lane.queues for lane in self.lanes.values())
        if ours or (queue == SHARED_QUEUE and self._legacy is not None):
            self.wake(queue)
        else:
            self.ignored += 1

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
