"""The event log of a durable run: written in batches off the run's path, in order, complete
when the run ends; after a crash, a stream that starts the run (RUN_STARTED, even when the
killed execution wrote nothing) and ends with its true state."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from network import durable
from network.durable import event_log
from tests.network.durable.crash_network import SEQUENCE, team
from tests.network.durable.harness import crash_and_resume, expected_log
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
    monkeypatch.setattr(event_log, "RIDE_AFTER", 3600.0)  # nor a batch riding on a step
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
    flushed = flusher_appends(monkeypatch)
    the_run_ends_after(monkeypatch, lambda: flushed)  # else on a busy machine it may not race
    plain = plain_run_kinds()
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
    batches = written_batches(run_id)
    assert [event["type"] for batch in batches for event in batch] == plain
    assert flushed and len(batches) >= 2


def test_a_crash_loses_only_unwritten_events_and_the_resumed_stream_completes_the_run(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every event still in memory when the writer's tool call is killed: nothing written
    monkeypatch.setenv("AN_FLUSH_EVERY", "3600")
    monkeypatch.setenv("AN_RIDE_AFTER", "3600")
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
    monkeypatch.setattr(event_log, "RIDE_AFTER", 3600.0)
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


def stream_rows(db: str, run_id: str) -> list[tuple[int, bool]]:
    """Each row of the run's stream: its offset, and whether a step of the run was recorded
    in the same transaction."""
    import psycopg

    with psycopg.connect(db) as conn:
        rows = conn.execute(
            'SELECT s."offset", EXISTS (SELECT 1 FROM dbos.operation_outputs o '
            "WHERE o.workflow_uuid = s.workflow_uuid AND o.xmin = s.xmin) "
            'FROM dbos.streams s WHERE s.workflow_uuid = %s ORDER BY s."offset"',
            (run_id,),
        ).fetchall()
    return [(int(offset), bool(with_step)) for offset, with_step in rows]


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_due_events_ride_on_the_runs_recorded_steps(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_log, "FLUSH_EVERY", 3600.0)  # the flusher never comes due
    monkeypatch.setattr(event_log, "RIDE_AFTER", 0.0)  # pending events ride on every step
    from dbos._dbos import _get_dbos_instance

    from network.durable.announcer import announcer

    announced: list[tuple[str, str]] = []  # what the process's announcer is asked to announce
    monkeypatch.setattr(
        announcer(_get_dbos_instance()._sys_db), "announce", lambda *args: announced.append(args)
    )
    plain = plain_run_kinds()
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
    batches = written_batches(run_id)
    assert [event["type"] for batch in batches for event in batch] == plain  # in order, once
    rows = stream_rows(launched, run_id)
    # every batch was appended by a step's own statement, the run's last write by its last
    # router decision's (which has no step after it to ride on)
    assert len(rows) > 5 and all(with_step for _, with_step in rows)
    # each batch announced to readers, off the writing transaction
    channel = event_log.STREAMS_CHANNEL
    assert announced == [(channel, f"{run_id}::{event_log.STREAM_KEY}")] * len(rows)


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_a_runs_batches_reach_a_listening_reader_in_few_announcements_of_our_own(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader listening on DBOS's streams channel hears the run's writes; they are sent by
    the process's announcer, coalesced (fewer statements than batches), not by DBOS's
    notifier (a transaction through SQLAlchemy every 0.1 s)."""
    import psycopg
    from dbos._dbos import _get_dbos_instance

    from network.durable import announcer as announcing
    from network.durable.announcer import announcer

    monkeypatch.setattr(event_log, "RIDE_AFTER", 0.0)  # a batch on every step: many writes
    monkeypatch.setattr(announcing, "ANNOUNCE_EVERY", 2.0)  # longer than the run, however slow
    sys_db = _get_dbos_instance()._sys_db
    asked: list[tuple[str, str]] = []  # what DBOS's notifier is asked to announce
    monkeypatch.setattr(sys_db, "_signal_notification", lambda *args: asked.append(args))
    sender = announcer(sys_db)
    sent = sender.sent
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(launched, autocommit=True) as reader:
        reader.execute(f"LISTEN {event_log.STREAMS_CHANNEL}")
        anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
        heard = [n.payload for n in reader.notifies(timeout=10.0, stop_after=1)]
    assert heard == [f"{run_id}::{event_log.STREAM_KEY}"]
    assert asked == []
    assert sender.sent - sent == 1 < len(stream_rows(launched, run_id))  # all in one statement


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_events_wait_for_the_flusher_when_no_step_is_due(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_log, "FLUSH_EVERY", 3600.0)
    monkeypatch.setattr(event_log, "RIDE_AFTER", 3600.0)  # never due for a step either
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
    # the run's last write only, by the statement recording its last router decision
    assert stream_rows(launched, run_id) == [(0, True)]


def run_owned_by_a_test_execution(db: str) -> tuple[str, str]:
    """A run that ended, handed to an execution of the test's own (its id, the owner token)
    for the test to record steps of it."""
    import psycopg

    run_id = f"run_{uuid.uuid4().hex[:8]}"
    anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
    owner = "an-execution"
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute(
            "UPDATE dbos.workflow_status SET owner_xid = %s WHERE workflow_uuid = %s",
            (owner, run_id),
        )
    return run_id, owner


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_a_step_statement_sent_twice_appends_its_events_once(launched: str) -> None:
    """A step's statement retried after its connection broke (it committed, the answer was
    lost) records the step and appends its events once."""
    from dbos._dbos import _get_dbos_instance

    from network.durable.step_table import StepOutcome, step_table

    run_id, owner = run_owned_by_a_test_execution(launched)
    table = step_table(_get_dbos_instance()._sys_db)
    step = table._params(StepOutcome(run_id, owner, 90, "extra", 1, "x", None, "py_pickle"))
    batch = {"workflow": run_id, "key": event_log.STREAM_KEY, "value": "e30="}
    batch["serialization"] = "py_pickle"
    before = stream_rows(launched, run_id)

    async def twice() -> list[list[Any]]:
        params = {**step, **batch}
        return [await table.connections.execute_async(table._insert_riding, params) for _ in "ab"]

    first, second = anyio.run(twice)
    assert first == [(step["completed"], 1)]  # the step and one batch appended
    assert second == [(step["completed"], 0)]  # the same step again, nothing appended
    assert len(stream_rows(launched, run_id)) == len(before) + 1


def waiting_on_a_lock(db: str, statements: int) -> bool:
    """Whether `statements` step statements wait on a row lock (within 10 s)."""
    import time

    import psycopg

    deadline = time.monotonic() + 10
    with psycopg.connect(db, autocommit=True) as conn:
        while time.monotonic() < deadline:
            (waiting,) = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE '%%operation_outputs%%'"
            ).fetchone() or (0,)
            if waiting >= statements:
                return True
            time.sleep(0.01)
    return False


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
@pytest.mark.parametrize("written", ["after_the_statement_committed", "while_it_still_waits"])
def test_a_step_statement_cancelled_in_flight_appends_its_events_once(
    launched: str, monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    """A run cancelled while its step's statement, carrying a batch of events, waits on the
    server: the server runs it all the same (its connection is only dropped), so the batch,
    handed back unanswered, must not be appended again by the log's next write, whether that
    write comes after the statement committed or while it still waits."""
    import threading

    import psycopg
    from dbos._dbos import _get_dbos_instance

    from network.durable.step_table import StepOutcome, step_table
    from network.run.events import StepStarted

    monkeypatch.setattr(event_log, "RIDE_AFTER", 0.0)  # the pending event rides on the step
    monkeypatch.setattr(event_log, "FLUSH_EVERY", 3600.0)  # the log writes when told to
    run_id, owner = run_owned_by_a_test_execution(launched)
    table = step_table(_get_dbos_instance()._sys_db)
    outcome = StepOutcome(run_id, owner, 90, "extra", 1, "x", None, "py_pickle")
    before = len(stream_rows(launched, run_id))
    holder = psycopg.connect(launched)  # holds the run's row: the step's statement waits
    holder.execute(
        "SELECT 1 FROM dbos.workflow_status WHERE workflow_uuid = %s FOR UPDATE", (run_id,)
    )

    async def cancelled() -> event_log.EventLog:
        log = event_log.EventLog(run_id)
        await log(StepStarted("in-flight"))
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(table.record_async, outcome, log)
            assert await anyio.to_thread.run_sync(waiting_on_a_lock, launched, 1)
            tasks.cancel_scope.cancel()  # the run is cancelled: its statement goes on
        return log

    try:
        log = anyio.run(cancelled)
        writer = threading.Thread(target=log.write_pending)
        if written == "while_it_still_waits":
            writer.start()  # the log's next write, while the cancelled statement waits...
            assert waiting_on_a_lock(launched, 2)  # ...waits for it (sends it again)
            holder.commit()
        else:
            holder.commit()
            with psycopg.connect(launched) as conn:
                while not conn.execute(
                    "SELECT 1 FROM dbos.operation_outputs "
                    "WHERE workflow_uuid = %s AND function_id = 90",
                    (run_id,),
                ).fetchall():
                    conn.rollback()
            writer.start()
        writer.join(10)
    finally:
        holder.close()
    batches = written_batches(run_id)
    in_flight = [e for batch in batches for e in batch if e.get("stepName") == "in-flight"]
    assert len(in_flight) == 1  # appended once, by whichever statement recorded the step
    assert len(stream_rows(launched, run_id)) == before + 1
    assert not log._pending


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_events_that_rode_on_steps_outlive_a_kill_and_each_call_runs_once(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AN_FLUSH_EVERY", "3600")  # events are written only with steps...
    monkeypatch.setenv("AN_RIDE_AFTER", "0")  # ...every recorded step
    monkeypatch.setenv("AN_DURABLE_LOG", str(tmp_path / "plain.log"))
    plain = plain_run_kinds()
    effects = tmp_path / "effects.log"
    outcome = crash_and_resume(durable_db, effects, [WRITER_TOOL])  # its tool call killed
    # each router decision, model call and tool call ran once, the one in flight twice
    expected = [f"{kind} go" for kind in expected_log(SEQUENCE, [WRITER_TOOL])]
    assert effects.read_text().splitlines() == expected
    events = events_of(durable_db, outcome["run_id"])
    kinds = [event["type"] for event in events]
    resumed = len(kinds) - 1 - kinds[::-1].index("STATE_SNAPSHOT")  # the resumed execution's
    # what the killed execution emitted up to its last recorded step was written with it:
    # the start of a plain run's stream, the planner's calls and the writer's model call
    assert kinds[:resumed] == plain[:resumed]
    assert kinds[:resumed].count("TOOL_CALL_RESULT") == 1 and resumed > 15
    assert kinds.count("RUN_STARTED") == 1
    assert kinds[-1] == "RUN_FINISHED" and kinds.count("RUN_FINISHED") == 1
    results = [event["toolCallId"] for event in events if event["type"] == "TOOL_CALL_RESULT"]
    assert len(results) == len(set(results)) == 2  # each tool's result once
    assert outcome["state"] == FINAL_STATE


def test_the_flusher_is_woken_only_by_a_log_due_before_it_looks_again() -> None:
    import time

    written: list[str] = []
    flusher = event_log.Flusher()
    looks = 0
    take_due = flusher._take_due

    def counted() -> list[Any]:
        nonlocal looks
        looks += 1
        return take_due()

    flusher._take_due = counted  # type: ignore[method-assign]

    class Log:
        def __init__(self, name: str) -> None:
            self.name = name

        def write_in_background(self) -> None:
            written.append(self.name)

    def settled() -> int:
        """The flusher's looks, once it waits again."""
        deadline = time.monotonic() + 5
        while flusher._wakes_at == -float("inf") and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(0.05)
        return looks

    now = time.monotonic()
    first, later, sooner = Log("first"), Log("later"), Log("sooner")
    # due in 3 s: what comes before "sooner" is written (a thread started, two looks) must
    # take less, also on a loaded machine (0.6 s could run out first)
    flusher.schedule(first, now + 3)  # type: ignore[arg-type]
    waiting = settled()
    flusher.schedule(later, now + 60)  # type: ignore[arg-type]
    assert settled() == waiting  # not woken: it looks again before that anyway
    flusher.schedule(sooner, now)  # type: ignore[arg-type]
    deadline = time.monotonic() + 5
    while "sooner" not in written and time.monotonic() < deadline:
        time.sleep(0.001)
    assert written == ["sooner"] and looks > waiting  # woken at once, well before 3 s
    while "first" not in written and time.monotonic() < deadline:
        time.sleep(0.001)
    assert written == ["sooner", "first"]


class AnswerLost:
    """The first append of a batch to a stream commits, and its answer never comes back (the
    connection breaks after the server's commit): what a retried statement must not double."""

    def __init__(self) -> None:
        self.lost = 0

    def first_time(self, sql: str) -> bool:
        if self.lost or not appends_events(sql):
            return False
        self.lost += 1
        return True

    def error(self) -> Exception:
        import psycopg

        return psycopg.OperationalError("server closed the connection unexpectedly")


def appends_events(sql: str) -> bool:
    """Whether `sql` appends to a stream: by itself, or with a step's record."""
    return "INSERT INTO" in sql and "streams" in sql


def losing_answers_on_the_loop(monkeypatch: pytest.MonkeyPatch, lose: AnswerLost) -> None:
    """The run's last write (on its event loop: the statement recording the run's last
    router decision, or the log's own append) loses its first answer."""
    from network.durable import wire

    execute = wire.execute

    async def losing(connection: Any, sql: str, params: Any, watch: Any = None) -> Any:
        rows = await execute(connection, sql, params, watch)
        if lose.first_time(sql):
            raise lose.error()
        return rows

    monkeypatch.setattr(wire, "execute", losing)


def losing_answers_on_threads(monkeypatch: pytest.MonkeyPatch, lose: AnswerLost) -> None:
    """The flusher's writes (on its thread) lose the first answer."""
    from network.durable.connections import Connections

    take = Connections._take

    class Losing:
        def __init__(self, connection: Any) -> None:
            self.connection = connection

        def execute(self, sql: str, params: Any) -> Any:
            result = self.connection.execute(sql, params)
            if lose.first_time(sql):
                result.fetchall()
                raise lose.error()
            return result

        def __getattr__(self, name: str) -> Any:
            return getattr(self.connection, name)

    def taking(self: Connections) -> Any:
        connection = take(self)
        return connection if isinstance(connection, Losing) else Losing(connection)

    monkeypatch.setattr(Connections, "_take", taking)


def the_run_ends_after(monkeypatch: pytest.MonkeyPatch, happened: Callable[[], Any]) -> None:
    """The run's end waits, before it writes anything, until `happened()` (the flusher's
    thread did what the test is about): on a busy machine the run can end before that thread
    runs, and its last write would then append every event itself. It waits before the end
    takes the log, not inside the end's statement, which holds the log's write lock when the
    batch rides on the last decision's record (the flusher would wait on it)."""
    end = event_log.EventLog._end

    async def after_it(log: event_log.EventLog, final: Any, *, failed: bool) -> None:
        deadline = time.monotonic() + 60
        while not happened() and time.monotonic() < deadline:
            await anyio.sleep(0.005)
        await end(log, final, failed=failed)

    monkeypatch.setattr(event_log.EventLog, "_end", after_it)


def the_flusher_first(monkeypatch: pytest.MonkeyPatch, lose: AnswerLost) -> None:
    """The run's end waits until the flusher's first append lost its answer."""
    the_run_ends_after(monkeypatch, lambda: lose.lost)


def flusher_appends(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The flusher thread's appends, counted (a list the test reads: one item an append)."""
    appends: list[int] = []
    append = event_log.EventLog._append

    def counted(log: event_log.EventLog, params: dict[str, Any]) -> None:
        append(log, params)
        if threading.current_thread().name == "agent-network-events":
            appends.append(1)

    monkeypatch.setattr(event_log.EventLog, "_append", counted)
    return appends


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
@pytest.mark.parametrize(
    "writer", ["the_runs_last_write", "the_runs_last_write_alone", "the_flushers_writes"]
)
def test_a_batch_whose_answer_was_lost_is_appended_once(
    launched: str, writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An append retried after its connection broke (it committed, the answer was lost) is
    in the stream once: each event once, in order, no offset skipped. The run's last write
    rides on its last router decision's record; `_alone`: no decision waits (the log's own
    append, as when a run ends without one deferred)."""
    monkeypatch.setattr(event_log, "RIDE_AFTER", 3600.0)  # no batch rides on a step
    plain = plain_run_kinds()
    lose = AnswerLost()
    if writer == "the_runs_last_write_alone":
        from network.durable.steps import DurableSteps

        attach = DurableSteps.write_events_with_steps

        def without_carrier(steps: DurableSteps, log: event_log.EventLog) -> None:
            attach(steps, log)
            log.carrier = None  # the last decision is written after the run's end

        monkeypatch.setattr(DurableSteps, "write_events_with_steps", without_carrier)
    if writer.startswith("the_runs_last_write"):
        monkeypatch.setattr(event_log, "FLUSH_EVERY", 3600.0)  # one write: the last
        losing_answers_on_the_loop(monkeypatch, lose)
    else:
        monkeypatch.setattr(event_log, "FLUSH_EVERY", 0.0)  # every event due at once
        losing_answers_on_threads(monkeypatch, lose)
        the_flusher_first(monkeypatch, lose)
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
    assert lose.lost == 1
    batches = written_batches(run_id)
    assert [event["type"] for batch in batches for event in batch] == plain
    offsets = [offset for offset, _ in stream_rows(launched, run_id)]
    assert offsets == list(range(len(batches)))
