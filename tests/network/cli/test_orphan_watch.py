"""A serve worker whose supervisor is killed outright is stopped as SIGTERM stops it, shown on
real processes: a supervisor (a Python process) starts a worker that watches it, and is killed
with SIGKILL. (`test_serve_app.py` shows the same with uvicorn's workers.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.fakes.processes import ROOT

WORKER = """
import os, signal, sys, time
from network.cli.orphan_watch import exit_when_orphaned

def stop(signum, frame):
    open(sys.argv[1], "w").write("stopped gracefully")
    sys.exit(0)

signal.signal(signal.SIGTERM, stop)
exit_when_orphaned(int(sys.argv[2]))
print("watching", flush=True)
time.sleep(60)
"""

SUPERVISOR = """
import os, subprocess, sys
worker = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2], str(os.getpid())])
print(worker.pid, flush=True)
worker.wait()
"""


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, ended and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def ended_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_a_worker_stops_gracefully_once_its_supervisor_is_killed(tmp_path: Path) -> None:
    marker = tmp_path / "stopped"
    supervisor = subprocess.Popen(
        [sys.executable, "-c", SUPERVISOR, WORKER, str(marker)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert supervisor.stdout is not None
    worker = int(supervisor.stdout.readline())
    time.sleep(1.0)  # the worker is watching (its import and first poll)
    assert alive(worker)  # nothing happens while the supervisor lives
    supervisor.send_signal(signal.SIGKILL)
    supervisor.wait(10)
    assert ended_within(worker, 10)
    assert marker.read_text() == "stopped gracefully"  # SIGTERM first, as uvicorn stops it


def test_a_worker_started_after_its_supervisor_died_stops_at_once(tmp_path: Path) -> None:
    marker = tmp_path / "stopped"
    # the supervisor named is not this worker's parent: it is gone already
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(marker), "0"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    worker.wait(10)
    assert marker.read_text() == "stopped gracefully"
