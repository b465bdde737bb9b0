"""No stdio MCP server outlives its program, whatever loop the program runs and however it
ends, and `connect_timeout` holds from the first connection of a program on.

Each test runs `silent_servers.py` in a real subprocess: three servers that never answer,
connected at once, the program returning as soon as the first fails (their teardowns still
under way). Then it looks through /proc for any process carrying the probe id it gave the
program's servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.deadline
PROGRAM = str(Path(__file__).with_name("silent_servers.py"))


def run_program(*args: str) -> tuple[str, dict[str, Any]]:
    """Run the program with a fresh probe id; its id and what it printed."""
    probe = uuid.uuid4().hex
    # Its stderr goes to a file, not a pipe: a server left behind inherits it (the SDK gives
    # a stdio server this process's stderr) and would hold a pipe open for ten minutes.
    with tempfile.TemporaryFile("w+") as errors:
        done = subprocess.run(
            [sys.executable, PROGRAM, probe, *args],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            timeout=120,
            env=os.environ.copy(),
        )
        errors.seek(0)
        assert done.returncode == 0, errors.read()
    return probe, json.loads(done.stdout.strip().splitlines()[-1])


def carrying(probe: str) -> dict[int, str]:
    """The live processes whose environment holds `SILENT_PROBE=probe`: pid, command line."""
    entry = f"SILENT_PROBE={probe}".encode()
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:  # gone, or another user's
            continue
        if entry in environment:  # a zombie's environment reads empty
            found[int(pid)] = command.decode(errors="replace")
    return found


def left_behind(probe: str, within: float = 5.0) -> dict[int, str]:
    """The probe's processes still alive `within` seconds after the program exited (none,
    at once, once the program killed them; a killed process takes a moment to go). Any
    found are killed then, so that a failing test leaves nothing behind either."""
    deadline = time.monotonic() + within
    while (found := carrying(probe)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in found:
        os.kill(pid, signal.SIGKILL)
    return found


@pytest.mark.parametrize(
    "loop", [[], ["--own-loop"]], ids=["asyncio.run", "a loop closed with its tasks pending"]
)
def test_no_stdio_server_outlives_its_program(loop: list[str]) -> None:
    # asyncio.run cancels the teardowns under way (its own cancel goes through the SDK's
    # shield); a closed loop never runs them: either way `/bin/sleep 600` would be left,
    # reparented to init, for ten minutes.
    probe, said = run_program("1.5", "--preload", *loop)
    assert "no answer within connect_timeout=1.5 s" in said["error"]
    # the deadline, not the SDK's grace: waiting that out (2 s of wall clock after the 1.5 s
    # deadline) takes 3.5 s at least, however idle the machine; the rest is room for load
    assert said["failed_after"] < 3.4, said
    assert left_behind(probe) == {}


def test_the_deadline_holds_while_the_sdk_loads() -> None:
    # The first connection of a program loads the SDK (2 s of CPU, more on a loaded machine):
    # in a worker thread and under the connection's deadline, not before it on the loop.
    probe, said = run_program("0.2")
    assert said["failed_after"] < 1.5, said
    assert "did not finish loading within connect_timeout=0.2 s" in said["error"]
    assert left_behind(probe) == {}
