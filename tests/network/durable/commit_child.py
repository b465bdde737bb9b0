"""A child process of the commit crash test: the crash tests' child (`child`, on the thread
store `AN_THREAD_STORE`), whose `AN_KILL_AFTER_COMMIT`-th commit of an agent call, once the
store has it, writes `<log>.ready` and blocks: the test kills the process there, after the
store committed the call and before DBOS recorded the commit's step."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import network.threads.session as session
from network.threads.commit_once import commit_once
from tests.network.durable import child


def hang_after(count: int) -> None:
    """Make the session's `count`-th commit of agent calls block once it is committed."""
    made: list[int] = []

    async def committing(store: Any, thread_id: str, commit: Any) -> int:
        revision = await commit_once(store, thread_id, commit)
        if commit.results:
            made.append(revision)
            if len(made) == count:
                log = os.environ["AN_DURABLE_LOG"]
                partial = Path(f"{log}.ready.partial")
                partial.write_text("commit")
                os.replace(partial, f"{log}.ready")  # whole when the test sees it
                time.sleep(600)  # killed here
        return revision

    session.commit_once = committing  # type: ignore[assignment]


if __name__ == "__main__":
    if os.environ.get("AN_KILL_AFTER_COMMIT"):
        hang_after(int(os.environ["AN_KILL_AFTER_COMMIT"]))
    child.main()
