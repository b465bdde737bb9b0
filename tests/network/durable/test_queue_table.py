"""The queue's claim and its announcement (`network.durable.queue_table`), on DBOS's own rows:
a claim takes a queue's oldest runs of this application up to its limit and marks them as
DBOS's claim does, two claimers never take one run, and PostgreSQL announces every run that
becomes ENQUEUED on one of this library's queues once its transaction commits."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import psycopg
import pytest
from dbos import DBOSClient

from network.durable.connections import Connections
from network.durable.engine import APP_VERSION, WORKFLOW_NAME
from network.durable.network_queues import network_queue
from network.durable.queue_table import CHANNEL, QueueTable

QUEUE_NAME = network_queue("team")


def enqueue(client: DBOSClient, queue: str = QUEUE_NAME, **options: Any) -> str:
    run_id = f"run_{uuid.uuid4().hex[:12]}"
    client.enqueue(
        {"workflow_name": WORKFLOW_NAME, "queue_name": queue, "workflow_id": run_id, **options},
        "team",
        {"input": "go"},
    )
    return run_id


def rows(client: DBOSClient, run_ids: list[str]) -> dict[str, Any]:
    return {info.workflow_id: info for info in client.list_workflows(workflow_ids=run_ids)}


def claim(table: QueueTable, limit: int, queue: str = QUEUE_NAME) -> list[str]:
    owner = f"owner-{uuid.uuid4().hex[:6]}"
    claimed = table.claim(
        queue, limit=limit, executor="an-worker-t", owner=owner, version=APP_VERSION
    )
    return [status["workflow_uuid"] for status in claimed]


def test_a_claim_takes_the_oldest_runs_of_its_queue_up_to_its_limit(client: DBOSClient) -> None:
    table = QueueTable(Connections(client._sys_db))
    mine = [enqueue(client, priority=2) for _ in range(5)]
    elsewhere = enqueue(client, queue="another-queue")
    urgent = enqueue(client, priority=1)  # DBOS: a lower number is served first
    first = claim(table, 3)
    assert sorted(first) == sorted([urgent, *mine[:2]])
    second = claim(table, 10)
    assert sorted(second) == sorted(mine[2:])
    assert claim(table, 10) == []
    listed = rows(client, [*mine, urgent, elsewhere])
    assert listed[elsewhere].status == "ENQUEUED"
    for run_id in [*mine, urgent]:
        info = listed[run_id]
        assert info.status == "PENDING"
        assert info.executor_id == "an-worker-t"
        assert info.app_version == APP_VERSION
        assert info.recovery_attempts == 1  # counted as DBOS's claim counts a dispatch


def test_a_claim_leaves_another_applications_runs_alone(
    client: DBOSClient, durable_db: str
) -> None:
    other = DBOSClient(system_database_url=durable_db, application_name="someone-else")
    try:
        theirs = enqueue(other)
    finally:
        other.destroy()
    ours = enqueue(client)
    assert claim(QueueTable(Connections(client._sys_db)), 10) == [ours]
    assert rows(client, [theirs])[theirs].status == "ENQUEUED"


def test_two_claimers_at_once_never_take_one_run(client: DBOSClient) -> None:
    run_ids = {enqueue(client) for _ in range(24)}
    tables = [QueueTable(Connections(client._sys_db)) for _ in range(4)]
    taken: list[list[str]] = [[] for _ in tables]
    start = threading.Barrier(len(tables))

    def drain(index: int) -> None:
        start.wait()
        while got := claim(tables[index], 1):
            taken[index] += got

    threads = [threading.Thread(target=drain, args=(i,)) for i in range(len(tables))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [run_id for part in taken for run_id in part]
    assert sorted(every) == sorted(run_ids)  # each run taken exactly once


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_a_run_put_on_a_queue_of_ours_is_announced_once_committed(
    client: DBOSClient, durable_db: str
) -> None:
    QueueTable(Connections(client._sys_db)).install_wake_trigger()
    QueueTable(Connections(client._sys_db)).install_wake_trigger()  # a second install: a no-op
    with psycopg.connect(durable_db, autocommit=True) as listener:
        listener.execute(f"LISTEN {CHANNEL}")
        run_id = enqueue(client)
        heard = [n.payload for n in listener.notifies(timeout=10, stop_after=1)]
        assert heard == [QUEUE_NAME]
        enqueue(client, queue="another-queue")  # not one of ours: not announced
        assert [n.payload for n in listener.notifies(timeout=0.5)] == []
        # a run going back on a queue (a takeover's resume) is announced too
        claim(QueueTable(Connections(client._sys_db)), 1)
        with psycopg.connect(durable_db, autocommit=True) as other:
            other.execute(
                "UPDATE dbos.workflow_status SET status = 'ENQUEUED', "
                "queue_name = 'agent-network@an-x' WHERE workflow_uuid = %s",
                (run_id,),
            )
        heard = [n.payload for n in listener.notifies(timeout=10, stop_after=1)]
        assert heard == ["agent-network@an-x"]


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_a_claimed_runs_status_is_the_one_dbos_reads_to_start_it(client: DBOSClient) -> None:
    """The claim returns each run's row in DBOS's own form (`get_workflow_statuses`), which
    starting it needs: the same keys and values, so DBOS's next read is spared."""
    run_id = enqueue(client)
    table = QueueTable(Connections(client._sys_db))
    (claimed,) = table.claim(
        QUEUE_NAME, limit=1, executor="an-worker-t", owner="owner-1", version=APP_VERSION
    )
    (read,) = client._sys_db.get_workflow_statuses([run_id])
    assert claimed == read
