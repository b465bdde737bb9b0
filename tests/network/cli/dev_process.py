"""`agent-network dev` as a real process, for the CLI tests that drive the dev server."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


@contextmanager
def dev_server(*args: str, name: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Run `agent-network dev ARGS`; yield its URL (from the line it prints first, naming the
    network `name`) and the process; terminate it after, its stderr left to read (as text
    kept in memory: the pipe is closed)."""
    banner = f"Dev UI for '{name}' at http://127.0.0.1:"
    with announced_server("dev", *args, banner=banner) as (line, process):
        yield line.split(" at ", 1)[1].strip().rstrip("/"), process


@contextmanager
def announced_server(*args: str, banner: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Run `agent-network ARGS`, a server that announces itself; yield the first line it
    prints (which must start with `banner`) and the process; terminate it after."""
    process = subprocess.Popen(
        [sys.executable, "-m", "network.cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(banner), line
        yield line, process
    finally:
        process.terminate()
        process.wait(10)
        # the pipes closed (each left open was an `unclosed file` ResourceWarning); what the
        # process wrote on stderr stays for the test to read
        if process.stdout is not None:
            process.stdout.close()
        if process.stderr is not None:
            written = process.stderr.read()
            process.stderr.close()
            process.stderr = io.StringIO(written)
