"""A queue per network (`network.durable.network_queues`): a worker takes only the runs of the
networks it serves, is woken only by those, and a run of a network no live worker serves waits
ENQUEUED until one starts (or is cancelled); a killed worker's runs go back to the workers of
their own network; runs queued on the previous versions' shared queue are still served."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from dbos import DBOS, DBOSClient

from agents import Agent, ScriptedModel
from network import Network, durable
from network.durable import dispatch
from network.durable.connections import Connections
from network.durable.engine import APP_NAME, WORKFLOW_NAME
from network.durable.liveness import Liveness
from network.durable.network_queues import SHARED_QUEUE, network_queue
from network.durable.runs import run_request
from network.durable.takeover import Takeover
from network.run.options import RunOptions
from tests.network.durable.crash_network import SEQUENCE
from tests.network.durable.harness import READY_TIMEOUT, expected_log, kill_when_ready, spawn

HERE = Path(__file__).with_name("crash_network.py")
ENDED = ("SUCCESS", "ERROR", "CANCELLED")

quick = Network("quick", agents=[Agent("solo", model=ScriptedModel(["done"] * 1000))])
later = Network("later", agents=[Agent("solo", model=ScriptedModel(["done"] * 1000))])


@pytest.fixture
def worker_of_quick(
    durable_db: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dispatch.Dispatcher]:
    """This process as a worker of `quick` only (one run at a time), with no safety pass to
    speak of on PostgreSQL: whatever it claims there, it claims because it was told to."""
    monkeypatch.setattr(dispatch, "SAFETY_PASS", 3600.0)
    engine = durable.launch([quick], db=durable_db, worker=True, worker_concurrency=1)
    try:
        assert engine.dispatcher is not None
        yield engine.dispatcher
    finally:
        durable.shutdown()


def wait_for(
    client: durable.DurableClient, run_ids: list[str], until: tuple[str, ...] = ENDED
) -> dict[str, durable.DurableRunStatus]:
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        statuses = {run_id: client.status(run_id) for run_id in run_ids}
        if all(status.status in until for status in statuses.values()):
            return statuses
        assert time.monotonic() < deadline, f"runs not there yet: {statuses}"
        time.sleep(0.05)


def settled_claims(dispatcher: dispatch.Dispatcher, quiet: float = 1.0) -> int:
    """The dispatcher's claim count once it has not changed for `quiet` seconds."""
    deadline = time.monotonic() + READY_TIMEOUT
    seen, since = dispatcher.claims, time.monotonic()
    while time.monotonic() - since < quiet:
        assert time.monotonic() < deadline, "the dispatcher never stopped claiming"
        time.sleep(0.05)
        if dispatcher.claims != seen:
            seen, since = dispatcher.claims, time.monotonic()
    return seen


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_an_idle_worker_is_not_woken_by_runs_of_a_network_it_does_not_serve(
    worker_of_quick: dispatch.Dispatcher, durable_db: str
) -> None:
    """Ten runs of another network are announced one by one: the worker of `quick` claims
    for none of them (they wait, ENQUEUED), then one run of `quick` is claimed at once. The
    announcements come in order on one connection, so all ten were heard before it."""
    client = durable.DurableClient(durable_db)
    try:
        wait_for(client, [client.enqueue("quick", "warm-up")])  # the launch's claims are made
        # the claim the warm-up's freed slot sends may be made after its SUCCESS is read (the
        # dispatcher's thread, on a loaded machine): counted before the baseline, not after
        claims = settled_claims(worker_of_quick)
        ignored = worker_of_quick.ignored
        others = [client.enqueue("elsewhere", f"go-{i}") for i in range(10)]
        mine = client.enqueue("quick", "go")
        assert wait_for(client, [mine])[mine].status == "SUCCESS"
        waiting = [client.status(run_id) for run_id in others]
    finally:
        client.close()
    assert {(s.status, s.network, s.executor_id) for s in waiting} == {
        ("ENQUEUED", "elsewhere", None)
    }
    # one claim took the run, one more when its slot freed; none for the others
    assert worker_of_quick.claims - claims <= 2
    assert worker_of_quick.ignored - ignored == 10


def test_a_run_of_a_network_no_worker_serves_waits_until_cancelled(
    worker_of_quick: dispatch.Dispatcher, durable_db: str
) -> None:
    """A run of a network no worker serves is never claimed, so never failed: it stays
    ENQUEUED (with its network) while a worker of another network runs its own runs, until
    it is cancelled."""
    client = durable.DurableClient(durable_db)
    try:
        orphan = client.enqueue("nobody", "go")
        for i in range(3):  # the worker claims (SQLite: polls) over and over meanwhile
            mine = client.enqueue("quick", f"go-{i}")
            assert wait_for(client, [mine])[mine].status == "SUCCESS"
        time.sleep(5 * dispatch.SQLITE_POLL)
        status = client.status(orphan)
        assert (status.status, status.network, status.error) == ("ENQUEUED", "nobody", None)
        assert client.cancel(orphan).status == "CANCELLED"
        assert client.result(orphan, timeout=READY_TIMEOUT).status == "CANCELLED"
        assert client.cancel(mine).status == "SUCCESS"  # an ended run keeps its outcome
        with pytest.raises(durable.UnknownRunError):
            client.cancel("no-such-run")
    finally:
        client.close()


def test_a_second_launch_makes_a_worker_serve_the_networks_it_adds(
    worker_of_quick: dispatch.Dispatcher, durable_db: str
) -> None:
    client = durable.DurableClient(durable_db)
    try:
        run_id = client.enqueue("later", "go")
        durable.launch([later], db=durable_db, worker=True)
        assert client.result(run_id, timeout=READY_TIMEOUT).status == "SUCCESS"
    finally:
        client.close()


def enqueue_as_before(db: str, network: str, run_id: str) -> None:
    """A run queued as the previous version's `DurableClient.enqueue` queued it: on the one
    shared queue, whatever its network."""
    client = DBOSClient(system_database_url=db, application_name=APP_NAME)
    try:
        options: Any = {
            "workflow_name": WORKFLOW_NAME,
            "queue_name": SHARED_QUEUE,
            "workflow_id": run_id,
        }
        client.enqueue(options, network, run_request("go", RunOptions()))
    finally:
        client.destroy()


def test_runs_queued_by_the_previous_version_are_served_by_their_networks_workers(
    durable_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs on the previous versions' shared queue: one queued before the worker starts,
    and one after (a client not upgraded yet; on PostgreSQL heard at once, on SQLite found
    within the safety pass). Each of `quick` runs on the worker of `quick`; one of a network
    it does not serve is moved to that network's queue and waits there, not failed."""
    monkeypatch.setattr(dispatch, "SAFETY_PASS", 1.0 if "sqlite" in durable_db else 3600.0)
    durable.DurableClient(durable_db).close()  # the tables, as the previous version made them
    enqueue_as_before(durable_db, "quick", "before-start")
    enqueue_as_before(durable_db, "nobody", "not-served")
    engine = durable.launch([quick], db=durable_db, worker=True, worker_concurrency=1)
    client = durable.DurableClient(durable_db)
    try:
        assert engine.dispatcher is not None
        assert client.result("before-start", timeout=READY_TIMEOUT).status == "SUCCESS"
        enqueue_as_before(durable_db, "quick", "after-start")
        assert client.result("after-start", timeout=READY_TIMEOUT).status == "SUCCESS"
        waiting = client.status("not-served")
        assert (waiting.status, waiting.error) == ("ENQUEUED", None)
        listed = client._client.list_workflows(workflow_ids=["not-served"])
        assert listed[0].queue_name == network_queue("nobody")
    finally:
        client.close()
        durable.shutdown()


def worker(
    db: str,
    target: str,
    name: str,
    log: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    kill_kind: str | None = None,
) -> Any:
    """An `agent-network worker` process of one network of `crash_network.py`."""
    with monkeypatch.context() as env:
        if kill_kind is not None:
            env.setenv("AN_KILL_KIND", kill_kind)
        else:
            env.delenv("AN_KILL_KIND", raising=False)
        args = ["-m", "network.cli", "worker", f"{HERE}:{target}", "--db", db]
        return spawn([*args, "--concurrency", "1", "--executor-id", name], log, None)


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_workers_of_two_networks_on_one_database_each_run_their_own_runs_once(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two worker processes, one serving `team`, one `crew`, runs of both enqueued. The team
    worker is killed with SIGKILL inside a tool call: the crew worker, which takes its dead
    peer's runs over, puts the run back on team's queue and leaves it there (it would fail
    it: no network of that name), and runs its own. A new team worker then finishes team's
    runs. Every run succeeds on a worker of its network; each completed step ran once, the
    call in flight twice."""
    log = tmp_path / "effects.log"
    team_a = worker(durable_db, "team", "team-a", log, monkeypatch, kill_kind="tool:note")
    crew = worker(durable_db, "crew", "crew", log, monkeypatch)
    client = durable.DurableClient(durable_db)
    team_b = None
    try:
        team_runs = [client.enqueue("team", f"team-{i}", run_id=f"team-{i}") for i in range(2)]
        crew_runs = [client.enqueue("crew", f"crew-{i}", run_id=f"crew-{i}") for i in range(2)]
        kill_when_ready(team_a, log)  # team-a is inside a tool call of its one run
        (killed,) = [r for r in team_runs if client.status(r).executor_id == "an-worker-team-a"]
        done = wait_for(client, crew_runs)
        # the crew worker saw team-a die and put its run back, for team's workers only
        wait_for(client, [killed], until=("ENQUEUED",))
        time.sleep(1.0)  # the crew worker heard it: it had a second to take it, wrongly
        assert {client.status(r).status for r in team_runs} == {"ENQUEUED"}
        team_b = worker(durable_db, "team", "team-b", log, monkeypatch)
        done.update(wait_for(client, team_runs))
    finally:
        for process in (crew, team_b):
            if process is not None:
                process.terminate()
                process.wait(timeout=60)
        if team_a.poll() is None:
            team_a.kill()
        client.close()
    for run_id, status in done.items():
        assert status.status == "SUCCESS", status
        network = run_id.split("-")[0]
        assert status.network == network
        assert status.executor_id == ("an-worker-crew" if network == "crew" else "an-worker-team-b")
    lines = log.read_text().splitlines()
    for run_id in [*team_runs, *crew_runs]:
        effects = [line.split(" ")[0] for line in lines if line.endswith(f" {run_id}")]
        if run_id == killed:  # its tool call was in flight when killed: it ran twice
            assert effects == expected_log(SEQUENCE, [SEQUENCE.index("tool:note") + 1])
        else:
            assert effects == SEQUENCE, run_id


def test_a_networks_queue_is_never_taken_for_a_dead_process(postgres_url: str) -> None:
    """A takeover looks for processes' own queues (`agent-network@<executor id>`) by range;
    under a collation that ignores punctuation (ICU's `shifted`), a network's queue
    (`agent-network:<name>`, a name starting with a digit) sorts inside that range. Its runs
    must not make the network's name a suspect executor (whose lock nobody holds: "dead"),
    or every process would list the runs of the database each second."""
    server = postgres_url.replace("postgresql+asyncpg://", "postgresql://")
    name = f"durable_icu_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(
            f"CREATE DATABASE {name} LOCALE_PROVIDER icu ICU_LOCALE 'und-u-ka-shifted' "
            "TEMPLATE template0"
        )
    db = f"{server.rsplit('/', 1)[0]}/{name}"
    DBOS.migrate(db)
    client = DBOSClient(system_database_url=db, application_name=APP_NAME)
    liveness = Liveness(db, "an-watcher")
    try:
        options: Any = {"workflow_name": WORKFLOW_NAME, "queue_name": network_queue("1st")}
        client.enqueue(options, "1st", run_request("go", RunOptions()))
        with psycopg.connect(db, autocommit=True) as conn:  # the collation does what is said
            (inside,) = conn.execute(
                "SELECT %s > 'agent-network@' AND %s < 'agent-networkA'",
                (network_queue("1st"),) * 2,
            ).fetchone()  # type: ignore[misc]
        assert inside
        takeover = Takeover(
            liveness, {}, workflow_name=WORKFLOW_NAME, db=Connections(client._sys_db)
        )
        assert takeover.suspects() == []
    finally:
        liveness.close()
        client.destroy()
