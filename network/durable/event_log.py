"""The event stream of a durable run, kept in DBOS's database and readable by run id.

Each AG-UI event the run emits is appended, in its JSON form, to the DBOS stream `events` of
the run's workflow (`DurableClient.events(run_id)` reads it, from any process, while the run
goes on). Events are written in batches, one database write per agent call (at each
STEP_FINISHED, at the run's first and last events, and every `BATCH` events), not one per
event: a reader sees an agent call's events when it ends. The writes go through one writer
thread per process, in order, and on PostgreSQL the run does not wait for them, except for
its last batch: a run's stream is complete when its workflow ends (a reader stops there). On
SQLite, one writer at a time, the run waits for each batch: a write racing DBOS's own step
records for the file's lock costs more than it saves.

The append goes through DBOS's step-level stream write, which takes no step id of its own:
the events a run emits differ between its first execution and a replay (the replay gate drops
some), and the workflow's step ids must not. Batches not yet written when the process dies
are lost; the resumed execution starts its part of the stream with a STATE_SNAPSHOT.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio

STREAM_KEY = "events"
BATCH = 64
LAST = frozenset({"RUN_FINISHED", "RUN_ERROR"})
FLUSH_AFTER = LAST | {"RUN_STARTED", "STEP_FINISHED"}
_executor: ThreadPoolExecutor | None = None


def _writer() -> ThreadPoolExecutor:
    """The process's one event writer thread (one thread: batches are written in order)."""
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-network-events")
    return _executor


class EventLog:
    """An event sink appending to the run's DBOS stream."""

    def __init__(self, run_id: str) -> None:
        from dbos._dbos import _get_dbos_instance  # noqa: PLC0415 (dbos is optional and heavy)
        from dbos._serialization import WorkflowSerializationFormat  # noqa: PLC0415 (dbos)

        self.run_id = run_id
        # DBOS's system database itself: the public write_stream would take a step id.
        self._sys_db = _get_dbos_instance()._sys_db
        self._format = WorkflowSerializationFormat.DEFAULT
        self._pending: list[dict[str, Any]] = []
        self._concurrent = self._sys_db.engine.dialect.name == "postgresql"

    async def __call__(self, event: Any) -> None:
        pending = self._pending
        pending.append(event.model_dump(mode="json", by_alias=True, exclude_none=True))
        if event.type in FLUSH_AFTER or len(pending) >= BATCH:
            self._pending = []
            written = _writer().submit(self._append, pending)
            if event.type in LAST or not self._concurrent:  # see above
                await anyio.to_thread.run_sync(written.result)

    def _append(self, batch: list[dict[str, Any]]) -> None:
        self._sys_db.write_stream_from_step(
            self.run_id, 0, STREAM_KEY, batch, serialization_type=self._format
        )
