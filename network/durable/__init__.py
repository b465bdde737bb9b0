"""Durable runs and workers on DBOS Transact (the optional extra `agent-network[durable]`).

A durable run is a DBOS workflow: each router decision, model call and tool call is a
recorded step, so a run whose process dies resumes from its last completed step when its
process (or another worker) starts again, and no completed step runs twice.

    from network import durable

    durable.launch([network], db="sqlite:///runs.sqlite")   # once per process, at start
    result = await network.run("build it", durable=True)

    # scale-out: workers take their networks' runs (`agent-network worker FILE:network --db ...`)
    client = durable.DurableClient("postgresql://...")
    run_id = client.enqueue("team", "build it")
    client.result(run_id)          # waits for the run's end; UnknownRunError for a wrong id

DBOS keeps one instance per process, and a recovered run needs its network: launch once,
with every network the process may resume, before any durable run. `dbos` is imported only
by the functions here that need it, never by `import network`. See docs/durable.md.
"""

from __future__ import annotations

from network.durable.client import DurableClient, DurableRunStatus
from network.durable.engine import launch, launched, shutdown
from network.durable.process import (
    DurableConfigError,
    RecordedStepError,
    RunCancelledError,
    RunIdInUseError,
    UnknownRunError,
    UnrecordableStepError,
)
from network.durable.worker import run_worker

__all__ = [
    "DurableClient",
    "DurableConfigError",
    "DurableRunStatus",
    "RecordedStepError",
    "RunCancelledError",
    "RunIdInUseError",
    "UnknownRunError",
    "UnrecordableStepError",
    "launch",
    "launched",
    "run_worker",
    "shutdown",
]
