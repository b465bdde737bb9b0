"""A process that answers a thread's pending approval by thread id, as soon as it is told to.

`python -m tests.network.threads.approval_child STORE THREAD INTERRUPT GO`: once imported,
creates `GO.ready-PID`, waits until the file GO exists, then accepts INTERRUPT on THREAD.
Exits 0 when its answer ran, 3 when the store said the approval was answered already
(`AlreadyAnsweredError`). The `pay` tool appends what it paid to the file `PAY_LOG` names.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio

from network import AlreadyAnsweredError, Resume, ThreadRef
from tests.network.threads.payments import pay_network


async def main(store: str, thread: str, interrupt: str, go: Path) -> int:
    network = pay_network()
    Path(f"{go}.ready-{os.getpid()}").touch()  # imported: the test gives the signal once both are
    while not go.exists():  # both processes start their answer at the same moment
        time.sleep(0.001)
    try:
        await network.run(Resume({interrupt: True}), thread=ThreadRef(thread, store=store))
    except AlreadyAnsweredError as refused:
        print(f"refused: {refused}")
        return 3
    return 0


if __name__ == "__main__":
    store, thread, interrupt, go = sys.argv[1:5]
    sys.exit(anyio.run(main, store, thread, interrupt, Path(go)))
