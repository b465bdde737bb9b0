"""A child process of the interrupt tests: `python -m tests.network.durable.booking_child DB
RUN_ID MODE`.

MODE `run` runs the booking network durably until it stops on its confirmation, then
resumes it durably (accepting the call) as run `RUN_ID-resumed`, and writes the outcome to
`<log>.result`; MODE `resume` launches DBOS (which resumes the unfinished continuation) and
waits for that outcome.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from network import durable
from tests.network.durable.booking_network import booking


async def run_and_resume(run_id: str) -> Any:
    first = await booking.run("Book a seat", durable=True, run_id=run_id)
    answers = [interrupt.accept() for interrupt in first.interrupts]
    return await booking.run(first.resume(answers), durable=True, run_id=f"{run_id}-resumed")


def main() -> None:
    db, run_id, mode = sys.argv[1:4]
    out = Path(os.environ["AN_DURABLE_LOG"] + ".result")
    durable.launch([booking], db=db)
    try:
        if mode == "run":
            result = anyio.run(run_and_resume, run_id)
            outcome = {"output": result.output, "state": result.state.snapshot()}
        else:
            client = durable.DurableClient(db)
            status = client.result(f"{run_id}-resumed")
            client.close()
            outcome = {"output": status.output, "state": status.state, "status": status.status}
        out.write_text(json.dumps(outcome))
    finally:
        durable.shutdown()


if __name__ == "__main__":
    main()
