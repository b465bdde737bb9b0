"""Several OS processes on one durable database: a process that launches never touches a run
another live process executes, and the runs of a process killed with SIGKILL are finished by
a live process that serves their network, every completed step run once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from network import durable
from tests.network.durable.crash_network import SEQUENCE as KINDS
from tests.network.durable.harness import READY_TIMEOUT, child_env, expected_log, kill_when_ready

SEQUENCE = [f"{kind} go" for kind in KINDS]
FINAL_STATE = {
    "routed": ["planner", "planner", "writer", "writer"],
    "notes": ["planner wrote this", "writer wrote this"],
    "count": 2,
}
KILLED_IN = "model:writer"  # the call in flight when the first process is killed


def peer(log: Path, mode: str, arg: str, db: str, **env: str) -> subprocess.Popen[bytes]:
    environ = child_env(log, None)
    environ.pop("AN_KILL_KIND", None)
    environ.update(env)
    return subprocess.Popen(
        [sys.executable, "-m", "tests.network.durable.peer_child", db, mode, arg],
        cwd=log.parent,
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def wait_for_file(path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while not path.exists():
        if process.poll() is not None:
            err = process.stderr.read().decode() if process.stderr else ""
            pytest.fail(f"child exited ({process.returncode}) before writing {path.name}:\n{err}")
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def launched(log: Path, process: subprocess.Popen[bytes], mode: str) -> None:
    wait_for_file(Path(f"{log}.{mode}-{process.pid}.launched"), process)


def finished(client: durable.DurableClient, run_id: str) -> durable.DurableRunStatus:
    deadline = time.monotonic() + READY_TIMEOUT
    while (status := client.status(run_id)).status not in ("SUCCESS", "ERROR"):
        assert time.monotonic() < deadline, f"the run never finished: {status}"
        time.sleep(0.1)
    return status


def stop(log: Path, *processes: subprocess.Popen[bytes] | None) -> None:
    Path(f"{log}.stop").write_text("")
    for process in processes:
        if process is None:
            continue
        try:
            _, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        if process.returncode not in (0, -signal.SIGKILL):
            pytest.fail(f"a peer failed ({process.returncode}):\n{err.decode()}")


def test_a_launch_leaves_a_live_run_alone_and_a_killed_one_is_finished_by_a_peer(
    durable_db: str, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"
    run_id = f"run_{uuid.uuid4().hex[:10]}"
    first = peer(log, "run", run_id, durable_db, AN_SLOW_KIND="tool:note", AN_KILL_KIND=KILLED_IN)
    second = None
    client = None
    try:
        wait_for_file(Path(f"{log}.slow"), first)  # the first process is inside a 6 s tool
        second = peer(log, "serve", "team,other", durable_db)
        launched(log, second, "serve")  # ... when a second process launches on the database
        kill_when_ready(first, log)  # its tool ended; SIGKILL during its next model call
        client = durable.DurableClient(durable_db)
        status = finished(client, run_id)
    finally:
        if first.poll() is None:
            first.kill()
        stop(log, second)
        if client is not None:
            client.close()
    # The tool in flight during the second launch ran once; so did every completed router
    # decision, model call and tool call: only the call killed in flight ran twice.
    assert log.read_text().splitlines() == expected_log(SEQUENCE, [KINDS.index(KILLED_IN) + 1])
    assert status.status == "SUCCESS", status
    assert status.state == FINAL_STATE
    assert status.executor_id not in (None, "local")


def test_a_killed_run_waits_for_a_process_that_serves_its_network(
    durable_db: str, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"
    run_id = f"run_{uuid.uuid4().hex[:10]}"
    first = peer(log, "run", run_id, durable_db, AN_KILL_KIND=KILLED_IN)
    other = third = None
    client = durable.DurableClient(durable_db)
    try:
        other = peer(log, "serve", "other", durable_db)  # serves another network only
        launched(log, other, "serve")
        kill_when_ready(first, log)
        owner = client.status(run_id).executor_id
        time.sleep(2.0)  # ten looks for dead processes' runs, by the process of "other"
        waiting = client.status(run_id)
        assert (waiting.status, waiting.executor_id) == ("PENDING", owner)
        third = peer(log, "serve", "team", durable_db)
        status = finished(client, run_id)
    finally:
        if first.poll() is None:
            first.kill()
        stop(log, other, third)
        client.close()
    assert status.status == "SUCCESS", status
    assert status.state == FINAL_STATE
    assert log.read_text().splitlines() == expected_log(SEQUENCE, [KINDS.index(KILLED_IN) + 1])


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_two_live_processes_cannot_share_an_executor_id(durable_db: str) -> None:
    code = (
        "import sys; from network import durable; from tests.network.durable.peer_child "
        "import other\ntry:\n    durable.launch([other], db=sys.argv[1], executor_id='one')\n"
        "except durable.DurableConfigError as e:\n    print(e)\nelse:\n    print('launched')\n"
        "durable.shutdown()"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    durable.launch([], db=durable_db, executor_id="one")
    try:
        out = subprocess.run(
            [sys.executable, "-c", code, durable_db], env=env, capture_output=True, timeout=120
        )
    finally:
        durable.shutdown()
    assert b"executor id 'one' is held by a live process" in out.stdout, out.stderr.decode()
