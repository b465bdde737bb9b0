"""The event stream of a durable run, kept in DBOS's database and readable by run id.

Each AG-UI event the run emits is appended, in its JSON form, to the DBOS stream `events` of
the run's workflow (`DurableClient.events(run_id)` reads it, from any process, while the run
goes on). Events are written in batches, one database write per agent call (at each
STEP_FINISHED, at the run's first and last events, and every `BATCH` events), not one per
event: a reader sees an agent call's events when it ends. The append goes through DBOS's step-level stream write, which takes no step id of
its own: the events a run emits differ between its first execution and a replay (the replay
gate drops some), and the workflow's step ids must not. A step that is executed again after a
crash appends its events again (at least once, like the step).
"""

from __future__ import annotations

from typing import Any

import anyio

STREAM_KEY = "events"
BATCH = 64
FLUSH_AFTER = frozenset({"RUN_STARTED", "STEP_FINISHED", "RUN_FINISHED", "RUN_ERROR"})


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

    async def __call__(self, event: Any) -> None:
        pending = self._pending
        pending.append(event.model_dump(mode="json", by_alias=True, exclude_none=True))
        if event.type in FLUSH_AFTER or len(pending) >= BATCH:
            self._pending = []
            await anyio.to_thread.run_sync(self._append, pending)

    def _append(self, batch: list[dict[str, Any]]) -> None:
        self._sys_db.write_stream_from_step(
            self.run_id, 0, STREAM_KEY, batch, serialization_type=self._format
        )
