"""`commit_once`: a durable run's recorded thread commit, safe to execute again."""

from __future__ import annotations

import json

from network.errors import StaleThreadError
from network.threads.protocol import ThreadStore
from network.threads.thread_data import Commit


async def commit_once(store: ThreadStore, thread_id: str, commit: Commit) -> int:
    """`append_results`, made idempotent for a durable run's recorded commit.

    When the process died after the store committed but before the step was recorded, the
    step runs again and the store finds its revision stale: if the thread's next revision is
    this very commit (the same agent calls, or the same key values for a commit without
    calls), it is taken as done instead of committed twice.
    """
    try:
        return await store.append_results(thread_id, commit)
    except StaleThreadError:
        thread = await store.get_thread(thread_id)
        if thread is None or thread.revision != commit.revision + 1:
            raise
        ours = [(r.result.agent, r.result.started_at) for r in commit.results]
        stored = [
            (r.agent, r.started_at) for r in thread.results[len(thread.results) - len(ours) :]
        ]
        same_values = all(
            thread.state.get(key) == json.loads(value) for key, value in commit.state.items()
        )
        if (ours and stored == ours) or (not ours and same_values):
            return thread.revision
        raise
