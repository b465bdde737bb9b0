"""Module-level tools for the isolated-tool tests (a worker process imports them by name)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agents import tool


@tool(isolated=True)
def whose_process() -> int:
    """The id of the process the tool runs in."""
    return os.getpid()


@tool(isolated=True, outputs_to_state={"total": {"source": "total"}})
def add(a: int, b: int) -> dict[str, int]:
    """Add two numbers."""
    return {"total": a + b}


@tool(isolated=True)
def hang(pid_file: str) -> str:
    """Say which process this is, then hang for good."""
    Path(pid_file).write_text(str(os.getpid()))
    while True:
        time.sleep(1)
