"""Calls a thread waits on: approvals (interrupts) and client tool calls, kept with the thread.

A run that stops for a person (`StopReason.INTERRUPTED`) or for the client
(`StopReason.CLIENT_TOOL`) commits what it waits on with the agent call that asked for it, in
the same commit (`Commit.pending`). The stored thread shows it (`Thread.pending`, unanswered
calls only), so any process that knows the thread id can answer: `network.run(Resume(answers),
thread=...)` / `network.run(ToolResults(results), thread=...)`.

Answering is a claim the store decides (`Commit.answered`), atomically, in the commit's own
transaction: every claimed call must still be pending, or the whole commit is refused with
`AlreadyAnsweredError` naming the calls and the run that answered them, and nothing is written.
The claim is committed before the answered calls run, so two answers racing (in one process,
in two, or over HTTP) run the tool once: the one whose claim committed. A process that dies
between its claim and the call's commit leaves the call answered and not run (at most once);
the answer stays stored with the call.

Entries are JSON data (`PendingCall.data`): an `Interrupt`'s `to_json()` for an approval, a
`ToolCall`'s fields for a client tool call. A store keeps each with the revision of the commit
that stored it (`to_text(revision)`): that commit saved the call that asked for it, so the
revision says which checkpoint the entry belongs to. Time travel reads it: a fork at a
checkpoint waits on the entries of that checkpoint and the ones before it that still wait, and
a rewind withdraws the entries of the calls it removes (`network.threads.checkpoint_store`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from network.errors import MessageError
from network.history.messages import ToolCall, message_adapter
from network.run.interrupts import Interrupt

PendingKind = Literal["interrupt", "client_tool"]


@dataclass(frozen=True, slots=True)
class PendingCall:
    """One call a thread waits on: its id (the interrupt's, or the client tool call's), what
    kind it is, the run that stopped on it, and its JSON data.

    `held`: conversation messages that belong after the call's result, kept here until it
    has one: what a request said beside its answers, when the call it answered waits again
    (`network.serving.held_messages`). The run that answers the call (or leaves it behind)
    adds them; () for most entries.

    `trace`: the hex (trace id, span id) of the root span of the run that stopped on it, when
    that run was traced: the run that answers it, in any process, links its trace to that
    one (`network.continuing`)."""

    id: str
    kind: PendingKind
    run_id: str | None
    data: dict[str, Any] = field(default_factory=dict)
    held: tuple[Any, ...] = ()
    trace: tuple[str, str] | None = None

    @classmethod
    def of_interrupt(
        cls,
        interrupt: Interrupt,
        run_id: str | None,
        held: Sequence[Any] = (),
        trace: tuple[str, str] | None = None,
    ) -> PendingCall:
        """The entry of an interrupt waiting for a person (`held`, `trace`: see the class)."""
        return cls(interrupt.id, "interrupt", run_id, interrupt.to_json(), tuple(held), trace)

    @classmethod
    def of_tool_call(
        cls, call: ToolCall, run_id: str | None, trace: tuple[str, str] | None = None
    ) -> PendingCall:
        """The entry of a client tool call waiting for its result."""
        data = {"id": call.id, "name": call.name, "arguments": call.arguments}
        return cls(call.id, "client_tool", run_id, data, trace=trace)

    @property
    def tool_call_id(self) -> str:
        """The id of the tool call that waits (an interrupt's call, or the client's)."""
        if self.kind == "interrupt":
            return str(self.data.get("tool_call_id") or "")
        return self.id

    def interrupt(self) -> Interrupt:
        """The interrupt back (for an entry of kind "interrupt")."""
        return Interrupt.from_json(self.data)

    def tool_call(self) -> ToolCall:
        """The client tool call back (for an entry of kind "client_tool")."""
        return ToolCall(self.data["id"], self.data["name"], self.data.get("arguments", {}))

    def to_text(self, revision: int | None = None) -> str:
        """The JSON text a store keeps; `revision`: the thread's revision after the commit
        that stores it (see the module docstring)."""
        value: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "run_id": self.run_id,
            "data": self.data,
        }
        if revision is not None:
            value["revision"] = revision
        if self.held:
            value["held"] = [json.loads(message.to_json()) for message in self.held]
        if self.trace is not None:
            value["trace"] = list(self.trace)
        return json.dumps(value)

    @classmethod
    def from_text(cls, text: str) -> PendingCall:
        """An entry back from the text a store kept."""
        value = json.loads(text)
        held = tuple(message_adapter().validate_python(item) for item in value.get("held") or ())
        data = value.get("data") or {}
        return cls(value["id"], value["kind"], value.get("run_id"), data, held, _trace(value))


_HEX = re.compile(r"[0-9a-f]+")


def _trace(value: dict[str, Any]) -> tuple[str, str] | None:
    """An entry's stored trace ids, when they are ids (an entry stored before it had them, or
    edited by hand, has none: the answering run is then traced without the link)."""
    ids = value.get("trace")
    if not isinstance(ids, list) or len(ids) != 2:
        return None
    trace_id, span_id = ids
    for text, size in ((trace_id, 32), (span_id, 16)):
        if not (isinstance(text, str) and len(text) == size and _HEX.fullmatch(text)):
            return None
        if not int(text, 16):  # all zeros: OpenTelemetry's invalid id
            return None
    return trace_id, span_id


def trace_links(entries: Sequence[PendingCall], answered: Sequence[Any]) -> tuple[Any, ...]:
    """The distinct root-span ids (`PendingCall.trace`) of the runs that stopped on the
    entries `answered` (`(Interrupt, Answer)` pairs) answers: what the answering run links
    its trace to."""
    ids = {interrupt.id for interrupt, _answer in answered}
    traces = [entry.trace for entry in entries if entry.id in ids and entry.trace is not None]
    return tuple(dict.fromkeys(traces))


def held_by(entries: Sequence[PendingCall]) -> list[Any]:
    """The messages `entries` hold until their calls have results (`PendingCall.held`), in
    order."""
    return [message for entry in entries for message in entry.held]


def stored_revision(text: str, default: int) -> int:
    """The revision of the commit that stored the entry `text`; `default` for an entry stored
    before stores kept it (time travel then counts it with the thread's newest commit, the
    one a waiting call almost always comes from)."""
    revision = json.loads(text).get("revision")
    return revision if isinstance(revision, int) else default


def waiting_error(thread_id: str, waiting: list[PendingCall]) -> MessageError:
    """The refusal of messages added while the thread waits on `waiting`: an added message
    would land between a tool call and its result, a conversation providers refuse."""
    named = ", ".join(
        f"{entry.data.get('tool') or entry.data.get('name') or 'a tool'} "
        f"({'approval' if entry.kind == 'interrupt' else 'client tool call'} {entry.id})"
        for entry in waiting[:5]
    )
    return MessageError(
        f"thread {thread_id!r} waits on {named}: a message added now would land between the "
        "tool call and its result; answer it first (Resume / ToolResults), then add messages",
        index=None,
        field="thread",
    )
