"""A child process of the fan-out crash tests:
`python -m tests.network.durable.fanout_child DB RUN_ID MODE NETWORK`.

MODE `run` starts the run of NETWORK (durably, on thread `thread-1` of the store
`AN_THREAD_STORE`) and writes its outcome to `<log>.result`; MODE `resume` launches DBOS
(which resumes the unfinished run) and waits for the run's outcome.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio

from network import ThreadRef, durable
from tests.network.durable.fanout_network import NETWORKS


def main() -> None:
    db, run_id, mode, name = sys.argv[1:5]
    out = Path(os.environ["AN_DURABLE_LOG"] + ".result")
    network = NETWORKS[name]
    durable.launch(list(NETWORKS.values()), db=db)
    try:
        if mode == "run":
            store = os.environ["AN_THREAD_STORE"]
            result = anyio.run(
                lambda: network.run(
                    "go", durable=True, run_id=run_id, thread=ThreadRef("thread-1", store=store)
                )
            )
            outcome = {"output": result.output, "state": result.state.snapshot()}
            outcome["status"] = "SUCCESS"
        else:
            client = durable.DurableClient(db)
            status = client.result(run_id)
            client.close()
            outcome = {"output": status.output, "state": status.state, "status": status.status}
            outcome["error"] = status.error
        out.write_text(json.dumps(outcome))
    finally:
        durable.shutdown()


if __name__ == "__main__":
    main()
