"""A child process of the crash tests: `python -m tests.network.durable.child DB RUN_ID MODE`.

MODE `run` starts the run (durably) and writes its outcome to `<log>.result`; MODE `resume`
launches DBOS (which resumes the unfinished run) and waits for the run's outcome. With
`AN_THREAD_STORE` set, the run is on thread `thread-1` of that store; with `AN_FLUSH_EVERY`
set, the run's events wait that many seconds for their write to the event log; with
`AN_RIDE_AFTER` set, they ride on a recorded step that many seconds after the log's last write.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio

from network import durable
from network.durable import event_log
from tests.network.durable.crash_network import team


def main() -> None:
    db, run_id, mode = sys.argv[1:4]
    out = Path(os.environ["AN_DURABLE_LOG"] + ".result")
    if os.environ.get("AN_FLUSH_EVERY"):
        event_log.FLUSH_EVERY = float(os.environ["AN_FLUSH_EVERY"])
    if os.environ.get("AN_RIDE_AFTER"):
        event_log.RIDE_AFTER = float(os.environ["AN_RIDE_AFTER"])
    durable.launch([team], db=db)
    try:
        if mode == "run":
            store = os.environ.get("AN_THREAD_STORE")  # a durable run on a thread
            thread = {"thread_id": "thread-1", "store": store} if store else {}
            result = anyio.run(lambda: team.run("go", durable=True, run_id=run_id, **thread))
            outcome = {"output": result.output, "state": result.state.snapshot()}
        else:
            client = durable.DurableClient(db)
            status = client.result(run_id)
            client.close()
            outcome = {"output": status.output, "state": status.state, "status": status.status}
        out.write_text(json.dumps(outcome))
    finally:
        durable.shutdown()


if __name__ == "__main__":
    main()
