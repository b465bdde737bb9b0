"""The event log of a durable run: written in batches off the run's path, in order, complete
when the run ends; after a crash, a stream that starts the run (RUN_STARTED, even when the
killed execution wrote nothing) and ends with its true state."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from network import durable
from network.durable import event_log
from tests.network.durable.crash_network import team
from tests.network.durable.harness import crash_and_resume
from tests.network.durable.test_resumed_run import FINAL_STATE, WRITER_TOOL, events_of


@pytest.fixture
def launched(durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("AN_DURABLE_LOG", str(tmp_path / "effects.log"))
    durable.launch([team], db=durable_db)
    try:
        yield durable_db
    finally:
        durable.shutdown()


def plain_run_kinds() -> list[str]:
    kinds: list[str] = []
    anyio.run(lambda: team.run("go", sinks=[lambda event: kinds.append(event.type)]))
    return kinds


def written_batches(run_id: str) -> list[list[dict[str, Any]]]:
    """The log's writes, one list of events each (the run has ended: the stream is closed)."""
    from dbos import DBOS

    return list(DBOS.read_stream(run_id, event_log.STREAM_KEY))


def test_events_wait_for_one_write_made_by_the_last_event_of_the_run(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_log, "FLUSH_EVERY", 3600.0)  # no background write comes due
    plain = plain_run_kinds()
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
    batches = written_batches(run_id)
    # every event of the run (four agent calls) in one write, made by its last event before
    # its workflow ended
    assert [[event["type"] for event in batch] for batch in batches] == [plain]


def test_background_writes_racing_the_runs_own_keep_the_stream_in_order(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_log, "FLUSH_EVERY", 0.0)  # each event due at once, in the flusher
    plain = plain_run_kinds()
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
    batches = written_batches(run_id)
    assert [event["type"] for batch in batches for event in batch] == plain
    assert len(batches) >= 2


def test_a_crash_loses_only_unwritten_events_and_the_resumed_stream_completes_the_run(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every event still in memory when the writer's tool call is killed: nothing written
    monkeypatch.setenv("AN_FLUSH_EVERY", "3600")
    outcome = crash_and_resume(durable_db, tmp_path / "effects.log", [WRITER_TOOL])
    events = events_of(durable_db, outcome["run_id"])
    kinds = [event["type"] for event in events]
    assert kinds[:3] == ["RUN_STARTED", "STATE_SNAPSHOT", "STEP_STARTED"]
    # the stream still starts the run: the resumed execution wrote its replayed RUN_STARTED
    assert events[0]["runId"] == outcome["run_id"]
    # what a reader rebuilds from the stream is the run's state when it was killed...
    assert events[1]["snapshot"] == {
        "routed": ["planner", "planner", "writer"],
        "notes": ["planner wrote this"],
        "count": 1,
    }
    assert events[2] == {"type": "STEP_STARTED", "stepName": "writer"}  # the call under way
    # ...then the remaining steps, to the one end of the run
    assert kinds.count("RUN_STARTED") == 1 and kinds.count("STATE_SNAPSHOT") == 1
    assert kinds.count("STEP_FINISHED") == 2 and "TOOL_CALL_RESULT" in kinds
    assert kinds[-1] == "RUN_FINISHED" and kinds.count("RUN_FINISHED") == 1
    assert outcome["state"] == FINAL_STATE


def counting_hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The log's writes that went to a thread (`anyio.to_thread.run_sync`), by name."""
    hops: list[str] = []
    real = anyio.to_thread.run_sync

    async def counted(func: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(func, "__name__", "") == "write_pending":
            hops.append(func.__name__)
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    return hops


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_the_runs_last_write_is_made_on_its_event_loop(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_log, "FLUSH_EVERY", 3600.0)  # the last write writes it all
    hops = counting_hops(monkeypatch)
    plain = plain_run_kinds()
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
    assert [[event["type"] for event in batch] for batch in written_batches(run_id)] == [plain]
    assert hops == []  # no hop to a thread and back at the run's end


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_a_last_write_waits_for_the_write_under_way_in_a_thread(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    import psycopg
    from dbos._serialization import deserialize_value

    from network.run.events import RunFinished, StepStarted

    monkeypatch.setattr(event_log, "FLUSH_EVERY", 3600.0)
    hops = counting_hops(monkeypatch)
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    anyio.run(lambda: team.run("go", durable=True, run_id=run_id))  # the stream's workflow
    hops.clear()

    async def run() -> None:  # another execution's log of that run, writing after it
        log = event_log.EventLog(run_id)
        await log(StepStarted("first"))
        execute = log._table.db.execute

        def slow(sql: str, params: dict[str, Any]) -> list[Any]:
            time.sleep(0.3)  # a background write still under way when the run ends
            return execute(sql, params)

        monkeypatch.setattr(log._table.db, "execute", slow)
        writer = threading.Thread(target=log.write_pending)
        writer.start()
        while not log._writing.locked():
            time.sleep(0.001)
        await log(RunFinished("t", run_id))
        writer.join()

    anyio.run(run)
    assert hops == ["write_pending"]  # it waited for the write under way, in a thread
    with psycopg.connect(launched) as conn:
        rows = conn.execute(
            "SELECT value, serialization FROM dbos.streams WHERE workflow_uuid = %s "
            'ORDER BY "offset"',
            (run_id,),
        ).fetchall()
    from dbos._dbos import _get_dbos_instance

    serializer = _get_dbos_instance()._serializer
    batches = [deserialize_value(value, kind, serializer) for value, kind in rows]
    assert [[event["type"] for event in batch] for batch in batches[-2:]] == [
        ["STEP_STARTED"],
        ["RUN_FINISHED"],
    ]
