"""The body of a child process that runs one network durably (`gaps_child`, `sequence_child`):
`python -m tests.network.durable.<child> DB RUN_ID MODE`, as `child` does for the team.

MODE `run` starts the run (durably) and writes its outcome to `<log>.result`; MODE `resume`
launches DBOS (which resumes the unfinished run) and waits for the run's outcome."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from network import durable


def run_child(network: Any) -> None:
    """Run `network` on input "go" as the command line says (see the module docstring)."""
    db, run_id, mode = sys.argv[1:4]
    out = Path(os.environ["AN_DURABLE_LOG"] + ".result")
    durable.launch([network], db=db)
    try:
        if mode == "run":
            result = anyio.run(lambda: network.run("go", durable=True, run_id=run_id))
            outcome = {"output": result.output, "status": str(result.stop_reason)}
        else:
            client = durable.DurableClient(db)
            status = client.result(run_id)
            client.close()
            outcome = {"output": status.output, "usage": status.usage, "status": status.status}
        out.write_text(json.dumps(outcome))
    finally:
        durable.shutdown()
