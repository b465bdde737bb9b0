"""A thread's recorded runs: each one's input, the state its caller gave, and its agent calls.

A thread keeps its agent calls (`InferenceResult`s) in order, not which run made each: the runs
are read back from them (a replay runs them again, `network.capabilities.replay`; an export
makes a case of one, `network.evals.export`).

Decisions: a new run starts where the conversation a call saw is longer than what the calls
before it left (the run's user message came in), or at a call that only holds the tool calls
a person's answer resumed; the branches of one fan-out all saw the conversation as it was at
the fork. A run that made no agent call left nothing. A run's input is its calls' `input`; the
state its caller gave (`state=`) is what the run's first call committed on the caller's behalf
(its `writes` whose source is "caller", with the values its `state_delta` holds); its id, the
one its writes carry, when it wrote any.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from network.errors import ConfigurationError
from network.history.results import InferenceResult
from network.run.thread_ref import ThreadRef
from network.threads.ids import check_id, check_ids
from network.threads.protocol import ThreadNotFoundError
from network.threads.resolve import open_store
from network.threads.thread_data import Thread


@dataclass(slots=True)
class RecordedTurn:
    """One recorded run of a thread: its input, its caller's state and its agent calls.

    Attributes:
        run_id: the run's id (None for calls of a run that was never committed).
        input: the user's message the run answered.
        state: the keys its caller set (`state=`), as JSON values.
        calls: its agent calls, in order.
    """

    run_id: str | None
    input: str
    state: dict[str, Any] = field(default_factory=dict)
    calls: list[InferenceResult] = field(default_factory=list)


async def read_thread(thread: ThreadRef, app_name: str) -> Thread:
    """The stored `thread`, checked to be of the ref's app (by default `app_name`: the
    network's) and of its user when the ref names one (`ThreadNotFoundError` otherwise)."""
    check_id("thread_id", thread.id)
    check_ids(user_id=thread.user_id, app_name=thread.app_name)
    store, owned = open_store(thread.store)
    try:
        found = await store.get_thread(thread.id)
    finally:
        if owned:
            with anyio.CancelScope(shield=True):
                await store.close()
    app = thread.app_name or app_name
    if found is None or found.app_name != app:
        raise ThreadNotFoundError(f"thread {thread.id!r} of app {app!r} does not exist")
    if thread.user_id is not None and found.user_id != thread.user_id:
        raise ThreadNotFoundError(f"thread {thread.id!r} of user {thread.user_id!r} does not exist")
    return found


def recorded_turns(results: Sequence[InferenceResult]) -> list[RecordedTurn]:
    """The runs of a thread (or of one run's results), in order: see the module docstring."""
    turns: list[RecordedTurn] = []
    expected = -1  # the conversation's length the run's next call would see
    fork: tuple[str, int] | None = None  # a fan-out under way: its name, its history's length
    for result in results:
        length = len(result.history)
        branch = result.branch
        in_fork = branch is not None and fork is not None and branch.split("/")[0] == fork[0]
        if in_fork:
            assert fork is not None
            length = fork[1]  # every branch saw the conversation as it was at the fork
        elif branch is not None:
            fork = (branch.split("/")[0], length)
        else:
            fork = None
        if not turns or (not in_fork and length != expected) or resumed(result):
            turns.append(RecordedTurn(None, result.input, caller_state(result)))
            expected = length
        turns[-1].calls.append(result)
        expected += len(result.messages())
        if turns[-1].run_id is None:
            turns[-1].run_id = next((w.run_id for w in result.writes if w.run_id), None)
    if not turns:
        raise ConfigurationError("nothing to replay: the recording holds no agent call")
    return turns


def resumed(result: InferenceResult) -> bool:
    """Whether `result` records tool calls a person's answer resumed (a run that continued a
    stopped one): it has tool calls and no answer, and was not skipped."""
    return (
        not result.output
        and not result.skipped
        and result.error is None
        and bool(result.tool_calls)
    )


def caller_state(result: InferenceResult) -> dict[str, Any]:
    """The keys the caller wrote before the call (`state=` of its run), as JSON values."""
    keys = {write.key for write in result.writes if write.source == "caller"}
    values: dict[str, Any] = {}
    for op in result.state_delta:
        parts = pointer_parts(op.get("path", ""))
        if len(parts) != 1 or parts[0] not in keys:
            continue
        if op.get("op") == "remove":
            values.pop(parts[0], None)
        else:
            values[parts[0]] = copy.deepcopy(op.get("value"))
    return values


def pointer_parts(path: str) -> list[str]:
    """The unescaped parts of an RFC 6901 pointer (`/a~1b/-` is `["a/b", "-"]`)."""
    if not path.startswith("/"):
        return []
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]
