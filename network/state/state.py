"""`State`: the per-run store tools, routers and agents share.

It holds the key-value store (`kv`), the history of agent calls (`results`) and the
conversation (`messages`, one list every agent call appends to). A fresh State is made for
every run; nothing in it is shared with another run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, MutableSequence, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, cast

from network.errors import MessageError, StateError
from network.history.log import RecordLog
from network.history.messages import ToolMessage, check_messages
from network.history.results import InferenceResult
from network.history.summary import Summary
from network.history.view import HistoryView
from network.history.writes import StateWrite
from network.state.json_form import FORMAT, json_default, state_from_dict, state_to_dict
from network.state.kv import KV
from network.state.provenance import Writer, WriteRecord
from network.state.schema import StateSchema
from network.state.staged import StagedKV
from network.state.values import copy_value, is_pydantic_model

if TYPE_CHECKING:
    from pydantic import BaseModel


class State:
    """Typed key-value state plus the run's history.

    `State(data, schema=...)` validates `data` through the schema (handlers are not applied to
    a seed) and copies it, so the caller's objects are never shared with the store.
    """

    __slots__ = ("_loaded", "_messages", "kv", "results", "schema", "summaries")

    # The run's state holds a KV; a tool's view (`for_tool`) holds a StagedKV, which offers
    # tools the same reading and writing API, so both are typed as the store they stand for.
    kv: KV

    def __init__(
        self,
        data: Mapping[str, Any] | None = None,
        *,
        schema: StateSchema | Mapping[str, Any] | type[BaseModel] | None = None,
        results: list[InferenceResult] | None = None,
        messages: list[Any] | None = None,
    ) -> None:
        self.schema = StateSchema.coerce(schema)
        self.kv = KV(self.schema)
        defaults = self.schema.defaults
        seed = {key: copy_value(value) for key, value in defaults.items()} if defaults else {}
        if data is not None:
            if is_pydantic_model(data):
                data = data.model_dump(exclude_unset=True)
            elif not isinstance(data, Mapping):  # `dict.update` took pairs, or raised bare
                raise StateError(
                    "initial state must be a mapping of key -> value (or a State, or a "
                    f"pydantic model of the schema), got {type(data).__name__}"
                )
            elif schema is None and _looks_like_a_schema(data):
                # Haystack's `State(schema, data)`: the schema given as the data was refused
                # as an unstorable value (a type), naming the key but not the mix-up
                raise StateError(
                    "State's first argument is the data, and this looks like a schema "
                    "({key: {'type': ...}}): write State(data, schema=schema)"
                )
            elif data.get("format") == FORMAT:
                # AgentKit runs `{state: JSON.parse(saved)}`; read as data, this failed on its
                # "messages" part, saying nothing of the State it is
                raise StateError(
                    "this is a serialized State (State.to_json's form), not its data: load "
                    "it with State.from_json(text) (json.dumps a parsed one first)"
                )
            seed.update(data)
        if seed:
            self.kv.seed(seed)
        # A list, or on a thread run a `RecordLog`: the thread's calls, then this run's.
        self.results: MutableSequence[InferenceResult] = _checked_results(results)
        self._messages: MutableSequence[Any] = _checked_messages(messages)
        self._loaded = 0  # how many of `results` a thread's earlier runs made (`take_over`)
        # Summaries of the conversation's oldest turns, oldest first (see `Summary`).
        self.summaries: list[Summary] = []

    @property
    def messages(self) -> HistoryView:
        """The conversation so far as one read-only message list."""
        return HistoryView(self._messages)

    @property
    def data(self) -> dict[str, Any]:
        """A snapshot of every key, `temp:` included (changing it does not change state)."""
        return self.kv.data

    def snapshot(self) -> dict[str, Any]:
        """The state's JSON form: every key but `temp:` ones, as deltas describe it."""
        kv = self.kv
        out: dict[str, Any] = {}
        for key in kv.keys():
            spec = kv.spec(key)
            if spec.persistent:
                out[key] = spec.to_json(kv.get(key))
        return out

    def history_of(self, key: str) -> list[WriteRecord]:
        """Which agent call and tool wrote `key`, and when: every successful write, oldest first.

        On a thread run this covers the whole thread: the writes earlier runs committed with
        their agent calls (`InferenceResult.writes`, their `run_id` set, read from the thread's
        history page by page only when asked), then this run's.
        """
        own = self.kv.history_of(key)
        loaded = self._loaded
        if not loaded:
            return own
        # The run counts its calls from 0; on a thread, a call's index is its place in
        # `results`, after the thread's earlier calls.
        own = [
            record
            if record.writer.call_index is None
            else record._replace(
                writer=record.writer._replace(call_index=record.writer.call_index + loaded)
            )
            for record in own
        ]
        earlier = [
            WriteRecord(
                key, write.op, _writer_of(write, result.agent, index), write.at, write.run_id
            )
            for index, result in enumerate(islice(self.results, loaded))
            for write in result.writes
            if write.key == key
        ]
        return earlier + own

    def copy_for(self, schema: StateSchema) -> State:
        """A fresh State under `schema` that continues this one: its keys (validated and
        deep-copied), its conversation, agent calls and summaries (records never change, so
        the lists are copied, not the records)."""
        state = State(self.kv.data, schema=schema, results=list(self.results))
        if len(self._messages):
            state._messages = check_messages(list(self._messages))
        state.summaries = list(self.summaries)
        return state

    def for_tool(self) -> State:
        """A view for one tool call: the same history, with writes staged until committed."""
        view = State.__new__(State)
        view.schema = self.schema
        view.kv = cast(KV, StagedKV(self.kv)) if isinstance(self.kv, KV) else self.kv
        view.results = self.results
        view._messages = self._messages
        view.summaries = self.summaries
        view._loaded = self._loaded
        return view

    def for_branch(
        self, kv: KV, messages: list[Any] | None = None, conversation: Sequence[Any] | None = None
    ) -> State:
        """A parallel branch's State: `kv` (its own store), and the history and conversation
        as they are now (plus `messages`, a mapped branch's own input); it appends to its own.
        `conversation`: the branch's own instead of the run's (a resumed branch's)."""
        view = State.__new__(State)
        view.schema = self.schema
        view.kv = kv
        # A RecordLog shares the run's lists as a read-only prefix: no copy of a long thread's
        # history per branch, and nothing a branch appends reaches the run's own lists.
        view.results = RecordLog(self.results)
        view._messages = RecordLog(self._messages if conversation is None else list(conversation))
        if messages:
            view._messages.extend(messages)
        view.summaries = list(self.summaries)
        view._loaded = self._loaded
        return view

    def to_json(self) -> str:
        """The state as JSON: schema (types by name, handlers by import path), data (no
        `temp:` keys), results and messages."""
        parts = state_to_dict(self.schema, self.snapshot(), self.results, self._messages)
        return json.dumps(parts, default=json_default)  # an untyped key's pydantic model

    @classmethod
    def from_json(cls, text: str) -> State:
        """The State `to_json` wrote; anything else is a `StateError` (text that is not JSON
        too: a client's body must not surface as a bare JSONDecodeError or TypeError)."""
        if not isinstance(text, str | bytes | bytearray):
            raise StateError(f"not a serialized state (a {type(text).__name__}, not JSON text)")
        try:
            parsed = json.loads(text)
        except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
            raise StateError(f"not a serialized state (not JSON: {exc})") from exc
        data, schema, results, messages = state_from_dict(parsed)
        return cls(data, schema=schema, results=results, messages=messages)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return (
            self.snapshot() == other.snapshot()
            and self._messages == other._messages
            and self.results == other.results
            and self.schema.same_as(other.schema)
        )

    __hash__ = None  # type: ignore[assignment]

    def take_over(self, messages: Sequence[Any], results: Sequence[InferenceResult]) -> None:
        """Start an empty State from a thread's conversation and agent calls without copying
        them: each becomes the shared, read-only part of a `RecordLog` the run appends to
        (a `RecordLog` given is adopted as it is). So a run on a long thread neither copies
        its lists nor has the garbage collector trace copies of them."""
        if self._messages or self.results:
            raise ValueError("take_over needs a State with no messages and no results yet")
        self._messages = messages if isinstance(messages, RecordLog) else RecordLog(messages)
        self.results = results if isinstance(results, RecordLog) else RecordLog(results)
        self._loaded = len(results)

    def append_messages(self, messages: list[Any]) -> None:
        """Add messages to the conversation (the run loop's use)."""
        self._messages.extend(messages)

    def add_result(self, result: InferenceResult) -> None:
        """Record a finished agent call: it joins `results`, and what it said (unless an
        `on_start` hook skipped it) joins the conversation (`InferenceResult.messages`)."""
        self.results.append(result)
        if not result.skipped:
            # `result.messages()` written out: one list and two Python calls less per step.
            messages = self._messages
            messages.extend(result.output)
            for call in result.tool_calls:
                messages.append(
                    ToolMessage(
                        call.id, call.content, call.name, call.is_error, None, call.model_only
                    )
                )

    def history(self) -> HistoryView:
        """The conversation as it is now, frozen: later messages are not part of the view
        (what an agent call is sent, kept on its result without a copy)."""
        return HistoryView(self._messages, len(self._messages))

    def __repr__(self) -> str:
        return f"State(keys={self.kv.keys()!r}, results={len(self.results)})"


def _writer_of(write: StateWrite, agent: str, call_index: int) -> Writer:
    """The `Writer` of a write an earlier run stored with its call number `call_index`."""
    if write.source == "caller":
        return Writer(source="caller")
    owner = None if write.source == "router" else agent
    return Writer(owner, call_index, write.tool, write.tool_call_id, write.source, write.branch)


def _looks_like_a_schema(data: Mapping[str, Any]) -> bool:
    """Whether every value of `data` is a schema entry, `{"type": <a type>, ...}` (data that
    could never be stored: a type has no JSON form)."""
    return bool(data) and all(
        isinstance(entry, Mapping)
        and "type" in entry
        and (isinstance(entry["type"], type) or hasattr(entry["type"], "__origin__"))
        for entry in data.values()
    )


def _checked_results(results: Any) -> list[InferenceResult]:
    """`State(results=...)` as a list of `InferenceResult`s, or a `StateError` naming what is
    not one: taken unchecked, `results=[5]` or `results="abc"` ran, and failed where a router
    or `to_json` read them (an AttributeError), or never."""
    if results is None:
        return []
    if isinstance(results, str | bytes | Mapping) or not isinstance(results, Iterable):
        raise StateError(
            f"State(results=...) takes a list of InferenceResult, got {type(results).__name__}"
        )
    checked = list(results)
    for index, result in enumerate(checked):
        if not isinstance(result, InferenceResult):
            raise StateError(
                f"State(results=...): results[{index}] is {type(result).__name__}, not an "
                "InferenceResult (read JSON with InferenceResult.from_dict, or a whole state "
                "with State.from_json)"
            )
    return checked


def _checked_messages(messages: Any) -> list[Any]:
    """`State(messages=...)` checked field by field (dicts become messages), or a
    `MessageError` naming the message's position and the field (was pydantic's own
    ValidationError, and text was read as a list of one-letter messages)."""
    if messages is None:
        return []
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable):
        raise MessageError(
            f"State(messages=...) takes a list of messages, got {type(messages).__name__}",
            index=None,
            field="messages",
        )
    try:
        return check_messages(messages)
    except ValueError as exc:  # pydantic's ValidationError: its first error's place
        errors = exc.errors(include_url=False) if hasattr(exc, "errors") else []
        where: tuple[Any, ...] = tuple(errors[0]["loc"]) if errors else ()
        index = where[0] if where and isinstance(where[0], int) else None
        field = str(where[-1]) if len(where) > 1 else "message"
        why = errors[0]["msg"] if errors else str(exc)  # not the value: a client may read it
        place = f"message {index}" if index is not None else "a message"
        raise MessageError(
            f"State(messages=...): {place}, {field}: {why}", index=index, field=field
        ) from exc
