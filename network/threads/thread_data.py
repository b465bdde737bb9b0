"""What a thread store holds and hands back: thread records, commits and shared writes.

`ThreadInfo` and `Thread` are pydantic models (they leave the store for the caller). A `Commit`
is the unit a run hands to its store after each agent call; it travels only inside the process
and carries live objects (results, merge handlers), so it is a plain dataclass, never
serialized as a whole.

State values cross the store boundary as JSON text: a store keeps them as it gets them, and
`Thread` decodes them for the caller. Keys keep their scope prefix (`user:name`, `app:name`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_json

from network.errors import ConfigurationError
from network.history.handoffs import active_agent
from network.history.log import RecordLog
from network.history.messages import Message, ToolCall
from network.history.results import InferenceResult
from network.history.summary import Summary
from network.run.interrupts import Interrupt
from network.sentinels import DELETED
from network.state.handlers import first_merge, replace_values
from network.state.values import copy_value
from network.threads.ids import check_id, check_ids
from network.threads.pending import PendingCall
from network.utf8 import unencodable, utf8_copy

if TYPE_CHECKING:
    from network.state.schema import KeySpec

ANONYMOUS_USER = ""
"""The user of a thread created without a `user_id`: its `user:` keys are shared with every
other thread created without one (in the same app)."""


class ThreadInfo(BaseModel):
    """A thread's header: who owns it, how far it has got, and when it last changed."""

    model_config = ConfigDict(defer_build=True)

    thread_id: str
    app_name: str
    user_id: str = ANONYMOUS_USER
    revision: int = 0  # bumped by every commit; the optimistic lock of concurrent runs
    created_at: float = 0.0  # seconds since the epoch
    updated_at: float = 0.0  # time of the last commit (the creation time before any)
    message_count: int = 0
    result_count: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict)


def new_thread_info(
    thread_id: str, *, app_name: str, user_id: str, metadata: dict[str, Any] | None
) -> ThreadInfo:
    """The header of a thread created now, at revision 0; `InvalidIdError` naming the field
    when an id is not acceptable, `ConfigurationError` naming the entry when the metadata is
    not (checked before a store changes anything)."""
    check_id("thread_id", thread_id)
    check_ids(user_id=user_id, app_name=app_name)
    kept = check_metadata(metadata)
    now = time.time()
    return ThreadInfo(
        thread_id=thread_id,
        app_name=app_name,
        user_id=user_id,
        created_at=now,
        updated_at=now,
        metadata=kept,
    )


def check_metadata(metadata: Any) -> dict[str, Any]:
    """A thread's `metadata` (None: none) as a new dict, when every store can keep it as it
    is: a mapping of names (strings) to JSON values, with no NaN or infinity and no text
    without a UTF-8 form (a lone surrogate); else `ConfigurationError` naming the entry.
    Unchecked, `object()` was kept by the memory store and a `TypeError` from `json.dumps` on
    SQL, a NaN stored as `NaN` (not JSON), and a non-mapping a bare `TypeError`."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ConfigurationError(
            f"metadata must be a mapping of names to JSON values, got {type(metadata).__name__}"
        )
    for name, value in metadata.items():
        if not isinstance(name, str):
            raise ConfigurationError(f"metadata names must be strings, got {name!r}")
        try:
            json.dumps({name: value}, allow_nan=False, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError, RecursionError) as exc:  # UnicodeEncodeError too
            raise ConfigurationError(
                f"metadata {name!r} must be plain JSON (no NaN or infinity, no text without a "
                f"UTF-8 form): {_said(exc)}"
            ) from None
    return dict(metadata)


def _said(exc: Exception) -> str:
    if isinstance(exc, UnicodeEncodeError):
        return "it holds a lone surrogate"
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    return str(exc)


class Thread(ThreadInfo):
    """A whole thread: the conversation, the agent calls and the three scopes of state.

    `state` holds the thread's own keys, `user_state` the `user:` keys of its user in its app,
    `app_state` the `app:` keys of its app; values are in their JSON form. Each result's
    `history` is a view of `messages` (the conversation prefix that call was sent).
    `summaries` are the summaries context policies wrote of the conversation's oldest turns.

    Messages, results and summaries are immutable once committed, so a store decodes each
    once and hands the same objects to every reader: treat them as read-only.
    """

    model_config = ConfigDict(defer_build=True, arbitrary_types_allowed=True)

    # RecordLogs: the store's records shared read-only (no copy per load), lists as JSON
    messages: RecordLog[Message] = Field(default_factory=RecordLog)
    results: RecordLog[InferenceResult] = Field(default_factory=RecordLog)
    summaries: list[Summary] = Field(default_factory=list)
    state: dict[str, Any] = Field(default_factory=dict)
    user_state: dict[str, Any] = Field(default_factory=dict)
    app_state: dict[str, Any] = Field(default_factory=dict)
    # what the thread waits on: unanswered approvals and client tool calls (`threads.pending`)
    pending: list[PendingCall] = Field(default_factory=list)

    def full_state(self) -> dict[str, Any]:
        """Every key a run on this thread starts from: app, then user, then thread keys."""
        return {**self.app_state, **self.user_state, **self.state}

    @property
    def active_agent(self) -> str | None:
        """The agent that has the conversation: where the thread's next turn starts when the
        network follows handoffs (`network.history.handoffs.active_agent`)."""
        return active_agent(self.results)

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """The approvals the thread waits on (answer with `network.run(Resume(...))`)."""
        return [entry.interrupt() for entry in self.pending if entry.kind == "interrupt"]

    @property
    def pending_tool_calls(self) -> list[ToolCall]:
        """The client tool calls the thread waits on (`network.run(ToolResults(...))`)."""
        return [entry.tool_call() for entry in self.pending if entry.kind == "client_tool"]


@dataclass(frozen=True, slots=True)
class SharedWrite:
    """One write to a `user:` or `app:` key, for the store to re-apply to the value it holds.

    `value` is the write's input as the run gave it (or `DELETED`: the key is removed),
    `handler` the merge handler it went through. Re-applying it to the stored value, under the
    transaction's lock, is what lets two runs that append to the same `user:` list both land.
    """

    key: str
    value: Any
    handler: Callable[[Any, Any], Any]
    spec: KeySpec

    @property
    def scope(self) -> str:
        """ "user" or "app"."""
        return "user" if self.key.startswith("user:") else "app"

    def apply(self, current: str | None) -> str | None:
        """The new JSON text of the key given its stored JSON text (None: no value)."""
        if self.value is DELETED:
            return None
        spec = self.spec
        base = None if current is None else spec.validate(json.loads(current))
        value = copy_value(self.value)
        if self.handler is replace_values:
            merged = value
        elif base is None:
            merged = first_merge(self.handler, spec.type, value)
        else:
            merged = self.handler(base, value)
        return encode_value(spec.to_json(spec.validate(merged)))


@dataclass(slots=True)
class ResultRecord:
    """An agent call to store, and how much of the conversation its `history` covers.

    `history_length` is None when the call's history is not a prefix of the thread's
    conversation (a custom agent's own list); the result is then stored with it.
    """

    result: InferenceResult
    history_length: int | None


@dataclass(slots=True)
class Commit:
    """What one commit adds to a thread, applied all or nothing.

    A store applies it only when the thread is still at `revision` (else `StaleThreadError`)
    and bumps the revision by one.

    `append_only`: messages appended on their own (`network.add_messages`), which depend on
    nothing another commit changes: the store applies them at whatever revision the thread
    is at (`revision` is then only what the caller read), unless the thread waits on a
    pending call, whose result must come first: that is refused (`pending.waiting_error`), in
    the commit's own transaction, as is a message whose id the thread holds
    (`message_ids.check_new_ids`: `MessageError` on field "id"). A store that does not know
    the flag treats the commit as any other; the caller then reads again and retries on
    `StaleThreadError`.

    `synced=False`: the store may commit without waiting for the disk (the commit survives
    the process, a power cut only once a later synced commit reached the disk), for what a
    crash of the machine may lose: the input a served run keeps before its first agent call
    (`ThreadSession.keep_input`). A store that does not know the flag syncs as usual.
    """

    revision: int
    run_id: str | None = None
    messages: list[Any] = field(default_factory=list)  # appended to the conversation
    results: list[ResultRecord] = field(default_factory=list)
    state: dict[str, str] = field(default_factory=dict)  # thread keys set: key -> JSON text
    removed: list[str] = field(default_factory=list)  # thread keys deleted
    shared: list[SharedWrite] = field(default_factory=list)  # user:/app: writes, in order
    summaries: list[Summary] = field(default_factory=list)  # new conversation summaries
    # calls the run stopped on, committed with the agent call that asked for them
    pending: list[PendingCall] = field(default_factory=list)
    # the claim of an answer: pending call id -> the answer's JSON text; the store refuses the
    # whole commit (`AlreadyAnsweredError`) unless every one is still pending
    answered: dict[str, str] = field(default_factory=dict)
    append_only: bool = False
    synced: bool = True

    @property
    def empty(self) -> bool:
        """True when the commit would change nothing but the revision."""
        return not (
            self.messages
            or self.results
            or self.state
            or self.removed
            or self.shared
            or self.summaries
            or self.pending
            or self.answered
        )


def encode_value(value: Any) -> str:
    """The JSON text of a state value (what stores keep).

    Text with no UTF-8 form (a lone surrogate: an agent's `output_key` keeps its model's
    answer as it came) is stored with U+FFFD in its place (`network.utf8`), as the
    conversation's messages are, rather than failing the commit of a call that succeeded;
    the run's own state keeps the value as it was written. Only such a value pays for the
    second pass.
    """
    try:
        return to_json(value).decode()
    except ValueError as exc:  # pydantic_core's PydanticSerializationError
        if not unencodable(exc):
            raise
        return to_json(utf8_copy(value)).decode()


def decode_value(text: str) -> Any:
    """A state value back from its JSON text."""
    return json.loads(text)
