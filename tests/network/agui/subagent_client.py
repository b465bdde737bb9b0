"""Drives `client/subagents.mjs` (the pinned `@ag-ui/client`) and reads what it saw."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.fakes.processes import node_with

CLIENT_DIR = Path(__file__).parent / "client"


def drive(url: str, thread_id: str, turns: list[str] | None = None) -> dict[str, Any]:
    node = node_with("@ag-ui/client", CLIENT_DIR)
    done = subprocess.run(
        [node, "subagents.mjs", url, thread_id, *([json.dumps(turns)] if turns else [])],
        cwd=CLIENT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout, f"no report from the client script: {done.stderr}"
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["problems"] == []
    return report


def attributed(run: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each sub-agent run's events, by subagentRunId, checked to lie between its
    SUBAGENT_STARTED and SUBAGENT_FINISHED."""
    open_runs: set[str] = set()
    by_run: dict[str, list[dict[str, Any]]] = {}
    for event in run["events"]:
        sub = event.get("subagentRunId")
        if event["type"] == "SUBAGENT_STARTED":
            open_runs.add(sub)
            by_run.setdefault(sub, [])
        elif event["type"] in ("SUBAGENT_FINISHED", "SUBAGENT_ERROR"):
            open_runs.remove(sub)
        elif sub is not None:
            assert sub in open_runs, f"{event} outside its sub-agent run"
            by_run[sub].append(event)
    assert not open_runs
    return by_run
