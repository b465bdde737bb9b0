"""Child processes of the durable tests: started, killed with SIGKILL mid-step, resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
READY_TIMEOUT = 90.0


def child_env(log: Path, kill_at: int | None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["AN_DURABLE_LOG"] = str(log)
    env.pop("AN_KILL_AT", None)
    if kill_at is not None:
        env["AN_KILL_AT"] = str(kill_at)
    return env


def spawn(args: list[str], log: Path, kill_at: int | None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=log.parent,
        env=child_env(log, kill_at),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def kill_when_ready(process: subprocess.Popen[bytes], log: Path) -> str:
    """Wait until the child blocks in the chosen call, SIGKILL it; returns the call's kind."""
    ready = Path(f"{log}.ready")
    deadline = time.monotonic() + READY_TIMEOUT
    while not ready.exists():
        if process.poll() is not None:
            err = process.stderr.read().decode() if process.stderr else ""
            pytest.fail(f"child exited ({process.returncode}) before the kill point:\n{err}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("child never reached the kill point")
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kind = ready.read_text()
    ready.unlink()
    return kind


def finish(process: subprocess.Popen[bytes]) -> None:
    _, err = process.communicate(timeout=READY_TIMEOUT)
    assert process.returncode == 0, err.decode()


def crash_and_resume(
    db: str,
    log: Path,
    positions: list[int],
    child: str = "tests.network.durable.child",
    sequence: list[str] | None = None,
) -> dict[str, Any]:
    """Run once, killed at each of `positions` (1-based in the SEQUENCE) in turn; resumed
    after each kill, and finally to its end. Returns the outcome the last child read.

    `sequence`: the run's side effects (needed for more than one position: where a resumed
    execution goes on, `rerun_from`, sets the line its kill comes at).

    `child` is the module the child processes run (its modes `run` and `resume`). Each child
    is started while the one before it runs (`tests.network.durable.prestarted`: its imports
    overlap that run) and let go once that one is killed."""
    run_id = f"run_{uuid.uuid4().hex[:10]}"
    turns: list[tuple[str, int | None]] = []  # each child's mode and kill point
    lines = 0
    for attempt, position in enumerate(positions):
        # the first attempt writes `position` lines; a resumed one re-runs the call in flight
        if attempt == 0:
            lines = position
        else:
            before = positions[attempt - 1]
            lines += position - (before - 1 if sequence is None else rerun_from(sequence, before))
        turns.append(("run" if attempt == 0 else "resume", lines))
    turns.append(("resume" if positions else "run", None))

    def prestart(number: int) -> tuple[subprocess.Popen[bytes], Path]:
        mode, kill_at = turns[number]
        go = Path(f"{log}.go-{number}")
        args = ["-m", "tests.network.durable.prestarted", str(go), child, db, run_id, mode]
        return spawn(args, log, kill_at), go

    waiting: tuple[subprocess.Popen[bytes], Path] | None = prestart(0)
    try:
        for number, (_, kill_at) in enumerate(turns):
            assert waiting is not None
            process, go = waiting
            go.touch()  # the child before is dead (or there is none): this one begins
            waiting = prestart(number + 1) if number + 1 < len(turns) else None
            if kill_at is None:
                finish(process)
            else:
                kill_when_ready(process, log)
    finally:
        if waiting is not None:  # a failed turn: the next child never begins
            waiting[0].kill()
            waiting[0].wait()
    outcome: dict[str, Any] = json.loads(Path(f"{log}.result").read_text())
    outcome["run_id"] = run_id
    return outcome


def expected_log(sequence: list[str], positions: list[int]) -> list[str]:
    """The side effects of a run killed at `positions`: each call in flight ran twice, and
    the router decisions just before it too (`rerun_from`)."""
    expected: list[str] = []
    start = 0
    for position in positions:
        expected += sequence[start:position]
        start = rerun_from(sequence, position)
    return expected + sequence[start:]


def rerun_from(sequence: list[str], position: int) -> int:
    """Where (0-based in `sequence`) a run killed in call `position` (1-based) goes on once
    resumed: the call in flight, and before it the router decisions that led to it unless it
    is a tool call. A decision is recorded with the step after it (`network.durable.steps`),
    so one whose next step was in flight was not; a tool runs only once the decisions before
    it are recorded."""
    start = position - 1
    if not sequence[start].startswith("tool"):
        while start > 0 and sequence[start - 1].startswith("router"):
            start -= 1
    return start
