"""Workers wake on work and sleep otherwise (`network.durable.dispatch`): an idle worker reads
no queue, a queued run is announced by PostgreSQL and claimed at once, a worker with a backlog
takes its next run when a slot frees, and a worker killed with SIGKILL has its run finished by
a live worker woken by the run's return to the queue, no completed step run twice."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import sqlalchemy
from dbos import DBOSClient

from agents import Agent, ScriptedModel, call, tool
from network import Network, durable
from network.durable import dispatch
from network.durable.engine import APP_NAME, WORKFLOW_NAME
from network.durable.network_queues import network_queue
from network.durable.runs import run_request
from network.run.options import RunOptions
from tests.network.durable.crash_network import SEQUENCE
from tests.network.durable.harness import READY_TIMEOUT, expected_log, kill_when_ready, spawn

pytestmark = pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)

OLD_POLL = 0.2
"""Seconds between two reads of the queue by DBOS's queue thread, as workers were set up."""
NETWORK = f"{Path(__file__).with_name('crash_network.py')}:team"


@tool
def noted(text: str) -> str:
    """Note a text."""
    return f"noted {text}"


def answer(request: object) -> object:
    history = getattr(request, "history", [])
    return "done" if len(history) > 1 else call("noted", text="x")


quick = Network(
    "quick",
    agents=[Agent("worker", tools=[noted], model=ScriptedModel(answer))],
    router=lambda ctx: "worker" if ctx.call_count < 2 else None,
)


@pytest.fixture
def in_process_worker(
    durable_db: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dispatch.Dispatcher]:
    """This process as a worker of `quick` (one run at a time), with no safety pass to speak
    of: whatever it claims, it claims because it was told to."""
    monkeypatch.setattr(dispatch, "SAFETY_PASS", 3600.0)
    engine = durable.launch([quick], db=durable_db, worker=True, worker_concurrency=1)
    try:
        assert engine.dispatcher is not None
        settle(engine.dispatcher)
        yield engine.dispatcher
    finally:
        durable.shutdown()


def settle(dispatcher: dispatch.Dispatcher) -> None:
    """Until the launch's own claims (at start, once listening) are made."""
    deadline = time.monotonic() + READY_TIMEOUT
    last = -1
    while dispatcher.claims != last or dispatcher.claims < 1:
        assert time.monotonic() < deadline, "the dispatcher never claimed"
        last = dispatcher.claims
        time.sleep(0.5)


def statuses(db: str, run_ids: list[str]) -> dict[str, tuple[str, int, int | None, int]]:
    """Each run's status, creation, start and last update (milliseconds, the database's)."""
    with psycopg.connect(db, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT workflow_uuid, status, created_at, started_at_epoch_ms, updated_at "
            "FROM dbos.workflow_status WHERE workflow_uuid = ANY(%s)",
            (run_ids,),
        ).fetchall()
    return {row[0]: (row[1], row[2], row[3], row[4]) for row in rows}


def wait_until_done(db: str, run_ids: list[str], timeout: float = READY_TIMEOUT) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        found = statuses(db, run_ids)
        if len(found) == len(run_ids) and all(s[0] in ("SUCCESS", "ERROR") for s in found.values()):
            return found
        assert time.monotonic() < deadline, f"runs not finished: {found}"
        time.sleep(0.05)


def test_an_idle_worker_reads_no_queue_until_a_run_is_announced(
    in_process_worker: dispatch.Dispatcher, durable_db: str
) -> None:
    before = in_process_worker.claims
    time.sleep(10 * OLD_POLL)  # ten reads of the queue, had it polled
    assert in_process_worker.claims == before
    client = durable.DurableClient(durable_db)
    try:
        run_id = client.enqueue("quick", "go")
        assert client.result(run_id, timeout=READY_TIMEOUT).status == "SUCCESS"
    finally:
        client.close()
    assert in_process_worker.claims > before  # woken by the announcement, not by a timer


POLLING_THREADS = ("queue_thread", "queue-worker-", "dbos-background-jobs", "scheduler")
"""DBOS's threads that read the database on a timer for features this library does not use
(its queues, delayed workflows and timeouts, schedules), as their names show."""


def test_an_idle_worker_runs_none_of_dboss_polling_threads(
    in_process_worker: dispatch.Dispatcher,
) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while polling := [
        thread.name
        for thread in threading.enumerate()
        if any(part in thread.name for part in POLLING_THREADS)
    ]:
        assert time.monotonic() < deadline, f"DBOS's polling threads still run: {polling}"
        time.sleep(0.1)


def test_a_free_slot_takes_the_next_run_without_being_told(
    in_process_worker: dispatch.Dispatcher, durable_db: str
) -> None:
    """Three runs enqueued in one transaction are announced once; the worker runs one at a
    time, so the second and third are claimed because a slot freed, not on an announcement
    and not on a timer (the safety pass is an hour away)."""
    before = in_process_worker.claims
    done = run_three_at_once(durable_db)
    assert {status for status, *_ in done.values()} == {"SUCCESS"}
    starts = sorted(started for _, _, started, _ in done.values() if started is not None)
    assert len(starts) == 3 and starts[0] < starts[1] < starts[2]  # one at a time, in turn
    assert in_process_worker.claims - before >= 3  # one claim per run: at most one at a time


def run_three_at_once(durable_db: str) -> dict:
    """Three runs of `quick` enqueued in one transaction (announced once); their statuses
    once all ended."""
    client = DBOSClient(system_database_url=durable_db, application_name=APP_NAME)
    engine = sqlalchemy.create_engine(durable_db.replace("postgresql://", "postgresql+psycopg://"))
    try:
        options: dict = {"workflow_name": WORKFLOW_NAME, "queue_name": network_queue("quick")}
        request = run_request("go", RunOptions())
        with engine.begin() as conn:
            run_ids = [
                client.enqueue_in_transaction(conn, options, "quick", request).workflow_id
                for _ in range(3)
            ]
        return wait_until_done(durable_db, run_ids, timeout=30)
    finally:
        client.destroy()
        engine.dispose()


def test_an_ended_run_sends_a_claim_to_its_own_queue_only(
    in_process_worker: dispatch.Dispatcher, durable_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that ends frees a slot of the worker's networks' queues: the worker claims those,
    and not its own queue (no limit, nothing announced on it), which such a claim would find
    empty: one statement per run wasted."""
    claimed: list[tuple[str, ...]] = []
    claim = in_process_worker.table.claim

    def counted(queues: list[str], **kwargs: object) -> list:
        claimed.append(tuple(queues))
        return claim(queues, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(in_process_worker.table, "claim", counted)
    done = run_three_at_once(durable_db)
    assert {status for status, *_ in done.values()} == {"SUCCESS"}
    assert claimed and set(claimed) == {(network_queue("quick"),)}, claimed


@pytest.mark.deadline
def test_a_run_enqueued_to_an_idle_worker_process_starts_promptly(
    durable_db: str, tmp_path: Path
) -> None:
    """A real worker process: the time from enqueue to start is well under the queue's old
    polling interval (the median of seven, with a generous margin: half of it)."""
    log = tmp_path / "effects.log"
    worker = spawn(
        ["-m", "network.cli", "worker", NETWORK, "--db", durable_db, "--concurrency", "2"],
        log,
        None,
    )
    client = durable.DurableClient(durable_db)
    try:
        warm = client.enqueue("team", "warm-up")
        assert client.result(warm, timeout=READY_TIMEOUT).status == "SUCCESS"
        waits = []
        for i in range(7):
            time.sleep(0.3 + 0.05 * i)  # idle, at a different point of any poll each time
            run_id = client.enqueue("team", f"go-{i}")
            (_, created, started, _) = wait_until_done(durable_db, [run_id])[run_id]
            assert started is not None
            waits.append((started - created) / 1000)
    finally:
        client.close()
        worker.terminate()
        worker.wait(timeout=60)
    assert statistics.median(waits) < OLD_POLL / 2, waits
    assert max(waits) < dispatch.SAFETY_PASS, waits


def test_a_killed_workers_run_finishes_on_a_live_worker_woken_by_its_return(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worker a is killed with SIGKILL inside a tool call; worker b, already running and idle,
    is woken when the run goes back on the queue and finishes it: each completed step ran once,
    the call in flight twice."""
    log = tmp_path / "effects.log"
    args = ["-m", "network.cli", "worker", NETWORK, "--db", durable_db, "--concurrency", "1"]
    monkeypatch.setenv("AN_KILL_KIND", "tool:note")
    first = spawn([*args, "--executor-id", "a"], log, None)
    monkeypatch.delenv("AN_KILL_KIND")
    client = durable.DurableClient(durable_db)
    second = None
    try:
        killed = client.enqueue("team", "go-0", run_id="killed-0")
        kill_when_ready(first, log)  # worker a is inside the tool call
        assert client.status(killed).executor_id == "an-worker-a"
        second = spawn([*args, "--executor-id", "b"], log, None)
        other = client.enqueue("team", "go-1", run_id="other-1")
        done = wait_until_done(durable_db, [killed, other])
        assert {status for status, *_ in done.values()} == {"SUCCESS"}
        assert client.status(killed).executor_id == "an-worker-b"
    finally:
        if second is not None:
            second.terminate()
            second.wait(timeout=60)
        if first.poll() is None:
            first.kill()
        client.close()
    lines = log.read_text().splitlines()
    mine = [line.split(" ")[0] for line in lines if line.endswith(" go-0")]
    assert mine == expected_log(SEQUENCE, [SEQUENCE.index("tool:note") + 1])
    assert [line.split(" ")[0] for line in lines if line.endswith(" go-1")] == SEQUENCE


def test_a_worker_whose_connections_were_dropped_listens_again_and_misses_nothing(
    in_process_worker: dispatch.Dispatcher, durable_db: str
) -> None:
    """The server ends every session (the listener's too) while a run is being enqueued: the
    worker listens again on a new connection and claims what was announced meanwhile, with
    no timer to fall back on (the safety pass is an hour away)."""
    client = durable.DurableClient(durable_db)
    try:
        with psycopg.connect(durable_db, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        run_id = client.enqueue("quick", "go")  # perhaps announced to nobody
        assert client.result(run_id, timeout=READY_TIMEOUT).status == "SUCCESS"
    finally:
        client.close()


def test_a_run_claimed_while_its_worker_shuts_down_is_not_failed(
    durable_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker stops (SIGTERM, `durable.shutdown()`) while its dispatcher is starting a run
    it claimed: the run is started while the worker still knows its network, or left for a
    takeover, never recorded as failed for want of its network."""
    from network.durable import engine as durable_engine

    starting = threading.Event()

    def slow_start(claimed: list, owner: str) -> list[str]:
        starting.set()
        time.sleep(0.5)  # shutdown begins meanwhile
        return dispatch.start_claimed(claimed, owner)

    monkeypatch.setattr(durable_engine, "start_claimed", slow_start)
    durable.launch([quick], db=durable_db, worker=True, worker_concurrency=1)
    client = durable.DurableClient(durable_db)
    try:
        run_id = client.enqueue("quick", "go")
        assert starting.wait(READY_TIMEOUT)
        durable.shutdown()
        status = client.status(run_id)
    finally:
        durable.shutdown()
        client.close()
    assert status.status in ("SUCCESS", "PENDING"), status
