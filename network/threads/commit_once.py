"""`commit_once`: a durable run's recorded thread commit, safe to execute again."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from network.errors import StaleThreadError
from network.history.results import InferenceResult
from network.threads.protocol import ThreadStore
from network.threads.thread_data import Commit, Thread


async def commit_once(store: ThreadStore, thread_id: str, commit: Commit) -> int:
    """`append_results`, made idempotent for a durable run's recorded commit.

    When the process died after the store committed but before the step was recorded, the
    step runs again and the store finds its revision stale: if the thread's next revision is
    this very commit (the same agent calls, or the same key values for a commit without
    calls), it is taken as done instead of committed twice.

    An agent call is recognised by what a resumed run rebuilds exactly (its agent, input and
    branch, the model's recorded answer and its tool calls' ids and results), never by when
    it started or by its messages' ids: a resumed run replays the call's answer at another
    time, in messages of new ids. On a store that
    lists its checkpoints, the calls must also be this run's (`Checkpoint.run_id`).
    """
    try:
        return await store.append_results(thread_id, commit)
    except StaleThreadError:
        thread = await store.get_thread(thread_id)
        if thread is None or thread.revision != commit.revision + 1:
            raise
        if commit.results:
            ours = [_identity(record.result) for record in commit.results]
            stored = [_identity(result) for result in _last(thread.results, len(ours))]
            if stored == ours and await _made_by(store, thread_id, commit.run_id, len(ours)):
                return thread.revision
            raise
        if _same_values(thread, commit):
            return thread.revision
        raise


def _last(results: Sequence[InferenceResult], count: int) -> Sequence[InferenceResult]:
    return results[len(results) - count :] if len(results) >= count else []


def _identity(result: InferenceResult) -> Any:
    """What a resumed run rebuilds of an agent call exactly, as JSON data (a stored call is
    read back from JSON: compared in that form)."""
    return json.loads(
        json.dumps(
            [
                result.agent,
                result.input,
                result.branch,
                [_without_id(message.to_dict()) for message in result.output],
                [(call.id, call.name, call.content, call.is_error) for call in result.tool_calls],
            ],
            default=str,
        )
    )


def _without_id(message: dict[str, Any]) -> dict[str, Any]:
    """A message as data without its id, which each execution gives the message anew."""
    message.pop("id", None)
    return message


async def _made_by(store: ThreadStore, thread_id: str, run_id: str | None, count: int) -> bool:
    """Whether the thread's last `count` calls are run `run_id`'s, when the store can say
    (`checkpoints`); True when it cannot."""
    listing = getattr(store, "checkpoints", None)
    if run_id is None or not callable(listing):
        return True
    checkpoints = await listing(thread_id)
    if checkpoints is None:
        return True
    return len(checkpoints) >= count and all(
        checkpoint.run_id == run_id for checkpoint in checkpoints[len(checkpoints) - count :]
    )


def _same_values(thread: Thread, commit: Commit) -> bool:
    return all(thread.state.get(key) == json.loads(value) for key, value in commit.state.items())
