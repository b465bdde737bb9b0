"""Workers sharing one PostgreSQL queue: runs enqueued from another process, a concurrency
limit per worker, and a worker killed with SIGKILL whose run finishes on another worker."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from network import durable
from tests.network.durable.crash_network import SEQUENCE, team
from tests.network.durable.harness import READY_TIMEOUT, expected_log, kill_when_ready, spawn

NETWORK = f"{Path(__file__).with_name('crash_network.py')}:team"
FINAL_STATE = {
    "routed": ["planner", "planner", "writer", "writer"],
    "notes": ["planner wrote this", "writer wrote this"],
    "count": 2,
}


def worker(db: str, name: str, log: Path, kill_kind: str | None, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    with monkeypatch.context() as env:
        if kill_kind is not None:
            env.setenv("AN_KILL_KIND", kill_kind)
        else:
            env.delenv("AN_KILL_KIND", raising=False)
        args = ["-m", "network.cli", "worker", NETWORK, "--db", db, "--concurrency", "1"]
        return spawn([*args, "--executor-id", name], log, None)


def wait_for(
    client: durable.DurableClient, run_ids: list[str]
) -> dict[str, durable.DurableRunStatus]:
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        statuses = {run_id: client.status(run_id) for run_id in run_ids}
        if all(s.status in ("SUCCESS", "ERROR") for s in statuses.values()):
            return statuses
        if time.monotonic() > deadline:
            pytest.fail(f"runs did not finish: {statuses}")
        time.sleep(0.2)


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_a_run_whose_worker_is_killed_finishes_on_another(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "effects.log"
    first = worker(durable_db, "a", log, "tool:note", monkeypatch)
    client = durable.DurableClient(durable_db)
    second = None
    try:
        run_ids = [client.enqueue("team", f"go-{i}", run_id=f"queued-{i}") for i in range(2)]
        run_ids.append(team.enqueue("go-2", db=durable_db, run_id="queued-2"))  # the facade
        assert {client.status(run_id).status for run_id in run_ids} <= {"ENQUEUED", "PENDING"}
        kill_when_ready(first, log)  # worker a is inside a tool call, at its limit of one run
        statuses = [client.status(run_id) for run_id in run_ids]
        in_flight = [s for s in statuses if s.status == "PENDING"]
        assert len(in_flight) == 1 and in_flight[0].executor_id == "an-worker-a"
        assert sorted(s.status for s in statuses) == ["ENQUEUED", "ENQUEUED", "PENDING"]
        second = worker(durable_db, "b", log, None, monkeypatch)
        done = wait_for(client, run_ids)
        for run_id in run_ids:  # each run's event stream, read by run id
            kinds = [event["type"] for event in client.events(run_id)]
            assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
            assert kinds.count("STEP_FINISHED") >= 3
    finally:
        if second is not None:
            second.terminate()
            second.wait(timeout=30)
        if first.poll() is None:
            first.kill()
        client.close()
    for status in done.values():
        assert status.status == "SUCCESS", status
        assert status.state == FINAL_STATE
        assert status.executor_id == "an-worker-b"  # every run ended on the live worker
    lines = log.read_text().splitlines()
    killed = in_flight[0].run_id
    for i, run_id in enumerate(run_ids):
        mine = [line.split(" ")[0] for line in lines if line.endswith(f" go-{i}")]
        if run_id == killed:  # its tool call ran twice (in flight when killed), nothing else
            assert mine == expected_log(SEQUENCE, [SEQUENCE.index("tool:note") + 1])
        else:
            assert mine == SEQUENCE


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_a_value_of_a_class_the_network_file_defines_replays_on_another_worker(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker imported the network file under a name made with `hash()` of its path,
    which Python salts anew in each process (here: another PYTHONHASHSEED per worker). The
    tool's state value, recorded with pickle by that name, could not be read back by the
    worker that resumed the run: it failed with ModuleNotFoundError. Now the name is the same
    for the path in every process, and the run ends as if never killed."""
    log = tmp_path / "effects.log"
    target = f"{Path(__file__).with_name('placed_network.py')}:placer"
    args = ["-m", "network.cli", "worker", target, "--db", durable_db, "--concurrency", "1"]
    client = durable.DurableClient(durable_db)
    second = None
    with monkeypatch.context() as env:
        env.setenv("PYTHONHASHSEED", "1")
        env.setenv("AN_KILL_KIND", "model:after")  # after the tool's step was recorded
        first = spawn([*args, "--executor-id", "seed-1"], log, None)
    try:
        run_id = client.enqueue("placer", "go")
        kill_when_ready(first, log)
        with monkeypatch.context() as env:
            env.setenv("PYTHONHASHSEED", "2")
            env.delenv("AN_KILL_KIND", raising=False)
            second = spawn([*args, "--executor-id", "seed-2"], log, None)
        status = client.result(run_id, timeout=READY_TIMEOUT)
    finally:
        if second is not None:
            second.terminate()
            second.wait(timeout=30)
        if first.poll() is None:
            first.kill()
        client.close()
    assert (status.status, status.error) == ("SUCCESS", None)
    assert status.state == {"at": {"x": 7}} and status.output == "placed it"
    effects = [line.split(" ")[0] for line in log.read_text().splitlines()]
    assert effects == ["model:first", "tool:place", "model:after", "model:after"]


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
@pytest.mark.parametrize(
    ("asked", "error"), [("exit", "SystemExit: 2"), ("cancel", "CancelledError: ")]
)
def test_a_tool_that_exits_fails_its_run_and_the_worker_runs_the_next(
    durable_db: str, tmp_path: Path, asked: str, error: str
) -> None:
    """A tool's `sys.exit()` reached DBOS's event loop, which it stopped: the worker lived
    on, its run PENDING forever (a live worker's runs are never taken over) and the runs
    after it too. A tool's `CancelledError` (nobody cancelled the run) left its run PENDING
    forever likewise. Now the run fails as with any error, and the worker goes on."""
    target = f"{Path(__file__).with_name('exiting_network.py')}:exiting"
    args = ["-m", "network.cli", "worker", target, "--db", durable_db, "--concurrency", "1"]
    process = spawn(args, tmp_path / "effects.log", None)
    client = durable.DurableClient(durable_db)
    try:
        exited = client.enqueue("exiting", asked)
        failed = client.result(exited, timeout=READY_TIMEOUT)
        after = client.result(client.enqueue("exiting", "go"), timeout=READY_TIMEOUT)
    finally:
        process.terminate()
        process.wait(timeout=30)
        client.close()
    assert (failed.status, failed.error) == ("ERROR", error)
    assert (after.status, after.output) == ("SUCCESS", "done")
