"""What time travel on a thread hands back: checkpoints, the thread at one, and reports.

Every committed agent call on a thread is a checkpoint, numbered like `thread.results` (0 is the
first call). A checkpoint stands for the thread as it was once that call was committed, with
the writes the run made after it before anything else reached the thread (a router's writes
after the run's last call): its thread keys, its conversation and its summaries. The calls of
one `Parallel` fan-out are committed together, at their join, so they share one state.

`user:` and `app:` keys are not part of a checkpoint: other threads share them, so they never go
back with one thread. A fork or a rewind keeps their current values and reports which of them
were written after the checkpoint, and by whom (`SharedKeyWrite`).

Reports are pydantic models; what a thread may hold thousands of (`Checkpoint`,
`ToolCallNotUndone`, `SharedKeyWrite`) are plain dataclasses, which pydantic serializes too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from network.errors import ThreadError
from network.history.log import RecordLog
from network.history.messages import Message
from network.history.results import InferenceResult
from network.history.summary import Summary
from network.threads.thread_data import ThreadInfo

NOT_UNDONE = (
    "the tool calls listed ran, and their side effects (a payment, an e-mail, a file written) "
    "were not undone: only the thread's record of them moved"
)


class CheckpointNotFoundError(ThreadError):
    """A checkpoint index the thread does not have (or not an index at all)."""

    def __init__(self, message: str, *, thread_id: str, checkpoint: Any) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.checkpoint = checkpoint


class TimeTravelError(ThreadError):
    """A fork or rewind was refused: the store keeps no checkpoints, the thread predates them,
    or the update is not one a fork can carry. The message says which; `key` names the update
    key refused, when the refusal is about one."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass(slots=True)
class Checkpoint:
    """One committed agent call of a thread (a plain dataclass: a listing makes thousands, and
    a frozen one takes three times as long to make; treat it as read-only).

    Attributes:
        index: its position in `thread.results` (0: the first call).
        run_id: the run that made it.
        agent: the agent called.
        at: when the call started (seconds since the epoch).
        revision: the thread's revision the checkpoint stands for (its commit's, or that of
            the writes committed right after it, such as a router's at the run's end).
        messages: how long the conversation was at the checkpoint.
        wrote: the state keys its commit wrote (thread keys and `user:` / `app:` keys),
            sorted; `temp:` keys are never stored.
    """

    index: int
    run_id: str | None
    agent: str
    at: float
    revision: int
    messages: int
    wrote: tuple[str, ...] = ()


class CheckpointState(BaseModel):
    """A thread as it was at a checkpoint, read from what the store keeps.

    `state` holds the thread's own keys in their JSON form (as `Thread.state` does; a run on a
    fork validates them through its schema). `messages`, `results` and `summaries` are the
    conversation, the agent calls and the summaries as they were; records are shared with the
    store, read-only, and decoded only when read.
    """

    # Built at first use, not at import: every process that imports the threads package
    # (the CLI's, each served worker's) would pay for its schema otherwise.
    model_config = ConfigDict(defer_build=True, arbitrary_types_allowed=True)

    thread_id: str
    checkpoint: Checkpoint
    state: dict[str, Any] = Field(default_factory=dict)
    messages: RecordLog[Message] = Field(default_factory=RecordLog)
    results: RecordLog[InferenceResult] = Field(default_factory=RecordLog)
    summaries: list[Summary] = Field(default_factory=list)


@dataclass(slots=True)
class ToolCallNotUndone:
    """A tool call of a discarded agent call: it ran, and what it did outside stays done."""

    checkpoint: int  # the discarded call's index
    agent: str
    tool: str
    call_id: str
    is_error: bool = False


@dataclass(slots=True)
class SharedKeyWrite:
    """A write to a `user:` or `app:` key, made on the thread after a checkpoint.

    `checkpoint` is the index of the call that made it, None for a write committed without a
    call (a router's, after a run's last call); `source` says who inside the call ("agent",
    "tool", "router", "caller", "client"), `tool` and `tool_call_id` which tool call.
    """

    key: str
    scope: Literal["user", "app"]
    op: str = "set"
    checkpoint: int | None = None
    agent: str | None = None
    source: str | None = None
    tool: str | None = None
    tool_call_id: str | None = None
    run_id: str | None = None


class ThreadOrigin(BaseModel):
    """Where a thread came from: a fork of `parent_thread_id` at `checkpoint` (`kind="fork"`),
    or what `parent_thread_id` held before it was rewound to `checkpoint` (`kind="rewind"`)."""

    model_config = ConfigDict(defer_build=True)

    thread_id: str
    parent_thread_id: str
    checkpoint: int
    kind: Literal["fork", "rewind"]
    at: float


class ForkResult(BaseModel):
    """What `fork` made: the new thread, its parent, and the shared keys it could not take back.

    `shared_keys` lists the `user:` / `app:` keys the source thread wrote after the checkpoint:
    the fork sees their current values, not those at the checkpoint.
    """

    model_config = ConfigDict(defer_build=True)

    thread: ThreadInfo
    origin: ThreadOrigin
    shared_keys: list[SharedKeyWrite] = Field(default_factory=list)


class RewindReport(BaseModel):
    """What `rewind` did to a thread, and what it could not undo.

    Attributes:
        thread_id: the thread moved back.
        checkpoint: the checkpoint it now stands at.
        revision: its revision now (a rewind is a change: runs that loaded it before fail with
            `StaleThreadError` at their next commit).
        discarded_calls: how many agent calls were moved out of the thread.
        kept_as: the thread that now holds the thread as it was before the rewind (every call,
            message and key): nothing is deleted. Read it, fork it, or delete it yourself.
        tool_calls_not_undone: the tool calls of the discarded calls, in order.
        shared_keys: the `user:` / `app:` keys written after the checkpoint: they keep their
            current values.
        withdrawn: the ids of the approvals and client tool calls the thread waited on that
            discarded calls had asked for: withdrawn, so answering one is
            `AlreadyAnsweredError` and nothing runs (`kept_as` waits on nothing either).
        note: says, in words, that the side effects of those tool calls were not undone.
    """

    model_config = ConfigDict(defer_build=True)

    thread_id: str
    checkpoint: int
    revision: int
    discarded_calls: int
    kept_as: str
    tool_calls_not_undone: list[ToolCallNotUndone] = Field(default_factory=list)
    shared_keys: list[SharedKeyWrite] = Field(default_factory=list)
    withdrawn: list[str] = Field(default_factory=list)
    note: str = NOT_UNDONE
