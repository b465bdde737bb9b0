"""Announcing the event log's writes to listening readers: coalesced, on our own connection.

A reader of a run's stream (`DurableClient.events`, DBOS's `read_stream`) waits on DBOS's
streams channel (`NOTIFY dbos_streams_channel`, payload `<workflow id>::<key>`) between its
reads. The writes themselves do not notify: a transaction that notifies takes PostgreSQL's
notify lock, which serializes every notifying commit of the server, and a step's must not wait
for it. So each write is announced afterwards, and the announcements of `ANNOUNCE_EVERY`
seconds go out together, one statement for all of them.

DBOS's own notifier does that for DBOS's writes, through SQLAlchemy: a transaction built and
committed through its engine costs a busy worker about a tenth of its CPU at ten a second
(measured per thread). The `Announcer` sends the same announcements as one autocommit
statement on this process's own connections (`network.durable.connections`), from one thread
of its own that sleeps while nothing is pending (and ends after `IDLE_EXIT` seconds of that).
A reader sees a write within about `ANNOUNCE_EVERY` seconds, as with DBOS's notifier. The
statement is retried like every statement there (a dropped connection: until the database
answers); one the database refuses is logged and its announcements dropped, as DBOS drops
them: readers also look at the stream every polling interval.
"""

from __future__ import annotations

import threading
from typing import Any

import structlog

from network.durable.connections import Connections, PerDatabase, connections

ANNOUNCE_EVERY = 0.1
"""Seconds an announcement waits for others, to go out with them in one statement."""
IDLE_EXIT = 5.0
"""Seconds without an announcement after which the announcer's thread ends (a new one starts
with the next)."""
CLOSE_WAIT = 5.0
"""Seconds `close` waits for the thread's last statement."""
log = structlog.get_logger("network.durable")


class Announcer:
    """Sends this process's pending announcements on one PostgreSQL database (see the module
    docstring)."""

    def __init__(self, db: Connections) -> None:
        self.db = db
        self.sent = 0  # statements sent (tests read how many)
        self._statement = "SELECT pg_notify(%(channel)s, p) FROM unnest(%(payloads)s::text[]) p"
        self._pending: dict[str, set[str]] = {}  # channel -> payloads
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def announce(self, channel: str, payload: str) -> None:
        """NOTIFY `channel` with `payload` within about `ANNOUNCE_EVERY` seconds (once, however
        often it is asked for meanwhile)."""
        with self._changed:
            if self._stop.is_set():
                return
            idle = not self._pending
            self._pending.setdefault(channel, set()).add(payload)
            if self._thread is None or not self._thread.is_alive():  # (a forked child's too)
                self._thread = threading.Thread(
                    target=self._serve, name="agent-network-announce", daemon=True
                )
                self._thread.start()
            elif idle:  # the thread waits for a first announcement (else it is gathering)
                self._changed.notify()

    def close(self) -> None:
        """Send what is pending and stop (DBOS is shut down in this process)."""
        self._stop.set()
        with self._changed:
            self._changed.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=CLOSE_WAIT)

    def _serve(self) -> None:
        while True:
            with self._changed:
                waiting = self._changed.wait_for(
                    lambda: self._pending or self._stop.is_set(), timeout=IDLE_EXIT
                )
                if not waiting:  # idle: end (under the lock, so `announce` starts a new one)
                    self._thread = None
                    return
            self._stop.wait(ANNOUNCE_EVERY)  # gather what comes meanwhile
            self._send()
            if self._stop.is_set():
                return

    def _send(self) -> None:
        with self._changed:
            pending, self._pending = self._pending, {}
        for channel, payloads in pending.items():
            params: dict[str, Any] = {"channel": channel, "payloads": sorted(payloads)}
            self.sent += 1
            try:
                self.db.execute(self._statement, params)
            except Exception as exc:  # readers still look every polling interval
                log.warning("durable_announce_failed", channel=channel, error=type(exc).__name__)


_announcers = PerDatabase(lambda sys_db: Announcer(connections(sys_db)))


def announcer(sys_db: Any) -> Announcer:
    """The announcer of DBOS system database `sys_db` (PostgreSQL; one per process)."""
    return _announcers.of(sys_db)


def close_announcers() -> None:
    """Send every announcer's pending announcements and stop them."""
    for each in _announcers.clear():
        each.close()
