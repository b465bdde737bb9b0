"""Durable runs with a `Parallel` fan-out: killed with SIGKILL at random points (branches
interleaving differently on every attempt), resumed; no completed router decision, model call
or tool call runs twice, and the run ends with the state, history and thread of a plain run.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from network import ThreadRef, durable
from network.history.messages import message_list_adapter
from network.threads import SQLStore
from tests.network.durable.fanout_network import NETWORKS, STEPS
from tests.network.durable.harness import READY_TIMEOUT, ROOT

SEED = int(os.environ.get("AN_CRASH_SEED", random.randrange(1 << 30)))


def spawn(db: str, run_id: str, mode: str, name: str, log: Path, **env: str) -> Any:
    environ = dict(os.environ)
    for key in ("AN_KILL_AT", "AN_KILL_LINE", "AN_SLOW_MODEL", "AN_SLOW_START"):
        environ.pop(key, None)
    environ.update(env, AN_DURABLE_LOG=str(log))
    environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), environ.get("PYTHONPATH", "")])
    args = [sys.executable, "-m", "tests.network.durable.fanout_child", db, run_id, mode, name]
    return subprocess.Popen(
        args, cwd=log.parent, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def killed(process: Any, log: Path) -> bool:
    """SIGKILL the child once it blocks at its kill point: True; False if it finished first."""
    ready = Path(f"{log}.ready")
    deadline = time.monotonic() + READY_TIMEOUT
    while not ready.exists():
        if process.poll() is not None:
            err = process.stderr.read().decode()
            assert process.returncode == 0, err
            return False
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("child never reached its kill point")
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    ready.unlink()
    return True


def recorded(db: str, run_id: str, name: str) -> Counter[str]:
    """How many steps of each name the run has recorded (its router, model and tool calls)."""
    client = durable.DurableClient(db, migrate=False)
    try:
        steps = client._client.list_workflow_steps(run_id)
    finally:
        client.close()
    return Counter(s["function_name"] for s in steps if s["function_name"] in STEPS[name])


def effects(log: Path) -> list[tuple[str, int]]:
    return [(line.split()[0], int(line.split()[1])) for line in log.read_text().splitlines()]


def thread_of(store_url: str) -> Any:
    async def load() -> Any:
        store = SQLStore(store_url)
        try:
            return await store.get_thread("thread-1")
        finally:
            await store.close()

    return anyio.run(load)


def history(thread: Any) -> Any:
    """What the thread holds, without timings: conversation, calls (with branches), state."""
    calls = [
        (r.agent, r.branch, r.text, r.error, len(r.history), len(r.state_delta))
        for r in thread.results
    ]
    messages = message_list_adapter().dump_python(list(thread.messages), mode="json")
    for message in messages:  # a message's id is random (the model made it up)
        message.pop("id", None)
    return messages, calls, thread.state, thread.revision


def plain_run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The same network run without durability, on its own thread store."""
    monkeypatch.setenv("AN_DURABLE_LOG", str(tmp_path / "plain.log"))
    store = f"sqlite+aiosqlite:///{tmp_path / 'plain.db'}"
    network = NETWORKS[name]
    result = anyio.run(lambda: network.run("go", thread=ThreadRef("thread-1", store=store)))
    return result, history(thread_of(store))


def run_json(log: Path) -> dict[str, Any]:
    import json

    outcome: dict[str, Any] = json.loads(Path(f"{log}.result").read_text())
    return outcome


def test_a_fan_out_killed_at_random_points_resumes_without_repeating_a_completed_step(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(SEED)
    log = tmp_path / "effects.log"
    store = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    run_id = f"run_{uuid.uuid4().hex[:10]}"
    total = sum(STEPS["survey"].values())
    kills: list[tuple[list[tuple[str, int]], Counter[str]]] = []  # what ran, what was recorded
    target, mode, done = rng.randint(1, total), "run", False
    for _ in range(3):
        child = spawn(durable_db, run_id, mode, "survey", log, AN_KILL_AT=str(target),
                      AN_THREAD_STORE=store)  # fmt: skip
        if not killed(child, log):
            done = True
            break
        kills.append((effects(log), recorded(durable_db, run_id, "survey")))
        mode = "resume"
        target = len(kills[-1][0]) + rng.randint(1, 5)
    if not done:
        child = spawn(durable_db, run_id, "resume", "survey", log, AN_THREAD_STORE=store)
        _, err = child.communicate(timeout=READY_TIMEOUT)
        assert child.returncode == 0, err.decode()
    note = f"kills after {[len(ran) for ran, _ in kills]} effects (AN_CRASH_SEED={SEED})"
    outcome = run_json(log)
    assert outcome["status"] == "SUCCESS", (note, outcome)

    # Every step was recorded once; each call ran once, plus once more for every kill that
    # caught it in flight (it had started but was not recorded): a completed call never ran
    # again. Per step name, calls complete in order, so the recorded count says which.
    assert recorded(durable_db, run_id, "survey") == Counter(STEPS["survey"]), note
    ran = Counter(effects(log))
    ordinals = {name: sorted({o for n, o in ran if n == name}) for name in STEPS["survey"]}
    expected = Counter({key: 1 for key in ran})
    before = 0
    for logged, completed in kills:  # in flight at a kill: ran in that attempt, not recorded
        done_keys = {(n, o) for n in ordinals for o in ordinals[n][: completed[n]]}
        expected.update(set(logged[before:]) - done_keys)
        before = len(logged)
    assert ran == expected, note

    plain, plain_thread = plain_run("survey", tmp_path, monkeypatch)
    assert outcome["state"] == plain.state.snapshot(), note
    assert outcome["output"] == plain.output
    # the join merged the branches' writes in declared order, whatever order they ran in
    assert outcome["state"]["notes"] == [
        *("researcher noted", "researcher#0"),
        *("critic noted", "critic#1"),
        *("analyst noted", "analyst#2"),
    ]
    assert set(outcome["state"]["by_branch"]) == {
        "survey/researcher",
        "survey/critic",
        "survey/analyst",
    }
    # the thread holds each agent call once (the fan-out committed exactly once), as a
    # plain run's thread does
    assert history(thread_of(store)) == plain_thread, note


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_a_replay_whose_branches_interleave_otherwise_gives_each_branch_its_own_steps(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """First attempt: branch #1 runs its model, tools and model while #0 waits for its model;
    killed at the next router decision. The resumed attempt starts #1 late, so #0 replays
    its four steps first: each must get its own recorded answers and writes back."""
    log = tmp_path / "effects.log"
    store = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    run_id = f"run_{uuid.uuid4().hex[:10]}"
    first = spawn(durable_db, run_id, "run", "mapped", log, AN_SLOW_MODEL="#0",
                  AN_KILL_LINE="router 4", AN_THREAD_STORE=store)  # fmt: skip
    assert killed(first, log)
    ran_first = [line for line, _ in effects(log)]
    assert ran_first.index("tool:note@mapped/mapper#1") < ran_first.index(
        "tool:note@mapped/mapper#0"
    )
    resumed = spawn(durable_db, run_id, "resume", "mapped", log, AN_SLOW_START="#1",
                    AN_THREAD_STORE=store)  # fmt: skip
    _, err = resumed.communicate(timeout=READY_TIMEOUT)
    assert resumed.returncode == 0, err.decode()
    outcome = run_json(log)
    assert outcome["status"] == "SUCCESS", outcome
    ran = Counter(effects(log))
    assert ran == Counter({key: 2 if key == ("router", 4) else 1 for key in ran})
    plain, plain_thread = plain_run("mapped", tmp_path, monkeypatch)
    assert outcome["state"] == plain.state.snapshot()
    # each branch's own writes (its item in them), merged in declared order
    assert outcome["state"]["notes"] == ["mapper noted x", "mapper#0", "mapper noted y", "mapper#1"]
    assert history(thread_of(store)) == plain_thread


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_concurrent_tool_calls_writing_one_key_replay_both_writes(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two tool calls of one answer append to one list, each in its staged view; replayed
    from the record after a kill, both appends are made again (not one value replacing the
    other)."""
    log = tmp_path / "effects.log"
    store = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    run_id = f"run_{uuid.uuid4().hex[:10]}"
    first = spawn(durable_db, run_id, "run", "duo", log, AN_KILL_LINE="router 1",
                  AN_THREAD_STORE=store)  # fmt: skip
    assert killed(first, log)
    resumed = spawn(durable_db, run_id, "resume", "duo", log, AN_THREAD_STORE=store)
    _, err = resumed.communicate(timeout=READY_TIMEOUT)
    assert resumed.returncode == 0, err.decode()
    outcome = run_json(log)
    ran = Counter(effects(log))
    assert ran == Counter({key: 2 if key == ("router", 1) else 1 for key in ran})
    plain, plain_thread = plain_run("duo", tmp_path, monkeypatch)
    assert outcome["state"] == plain.state.snapshot()
    assert outcome["state"]["notes"] == ["duo noted", "duo#-"]
    assert history(thread_of(store)) == plain_thread
