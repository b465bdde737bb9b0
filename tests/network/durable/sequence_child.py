"""A child process of the `sequence` crash test (`sequence_network`):
`python -m tests.network.durable.sequence_child DB RUN_ID MODE`, as `child` does for the team."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio

from network import durable
from tests.network.durable.sequence_network import team


def main() -> None:
    db, run_id, mode = sys.argv[1:4]
    out = Path(os.environ["AN_DURABLE_LOG"] + ".result")
    durable.launch([team], db=db)
    try:
        if mode == "run":
            result = anyio.run(lambda: team.run("go", durable=True, run_id=run_id))
            outcome = {"output": result.output, "status": str(result.stop_reason)}
        else:
            client = durable.DurableClient(db)
            status = client.result(run_id)
            client.close()
            outcome = {"output": status.output, "status": status.status}
        out.write_text(json.dumps(outcome))
    finally:
        durable.shutdown()


if __name__ == "__main__":
    main()
