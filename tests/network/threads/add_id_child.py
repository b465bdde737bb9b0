"""A process that appends a message with a given id to a thread, having read it when told to.

`python -m tests.network.threads.add_id_child STORE THREAD ID GO`: `network.add_messages`
reads the thread (which does not hold ID yet), creates `GO.ready-PID`, waits until the file GO
exists, then commits. Both racing processes have thus passed the check made on the read.
Exits 0 when its message landed, 3 when it was refused on field "id" naming ID.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from agents import Agent, ScriptedModel
from network import MessageError, Network, ThreadRef, UserMessage
from network.threads import SQLStore


async def main(url: str, thread: str, message_id: str, go: Path) -> int:
    network = Network("support", agents=[Agent("a", model=ScriptedModel(["hi"]))])
    async with SQLStore(url) as store:
        read = store.get_thread

        async def read_then_wait(thread_id: str) -> Any:
            found = await read(thread_id)
            Path(f"{go}.ready-{os.getpid()}").touch()
            while not go.exists():  # both processes commit at the same moment
                time.sleep(0.001)
            return found

        store.get_thread = read_then_wait  # type: ignore[method-assign]
        try:
            await network.add_messages(
                ThreadRef(thread, store=store), [UserMessage(f"from {os.getpid()}", message_id)]
            )
        except MessageError as refused:
            print(f"refused on {refused.field}: {refused}")
            return 3 if refused.field == "id" and repr(message_id) in str(refused) else 4
    return 0


if __name__ == "__main__":
    url, thread, message_id, go = sys.argv[1:5]
    sys.exit(anyio.run(main, url, thread, message_id, Path(go)))
