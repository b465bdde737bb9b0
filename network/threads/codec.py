"""JSON forms of what a thread stores: conversation messages and agent calls.

A result's `history` is the conversation prefix its call was sent, so storing it with every
result would make a thread's storage grow with the square of its length. The conversation is
stored once, message by message; each result is stored without its history plus the length of
that prefix, and reading it back rebuilds the history as a `HistoryView` of the conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from network.history.messages import MESSAGE_TYPES, message_adapter
from network.history.results import InferenceResult
from network.history.summary import Summary
from network.history.view import HistoryView
from network.threads.thread_data import ResultRecord
from network.utf8 import bytes_text

_WITHOUT_HISTORY = {"history"}


def encode_message(message: Any) -> str:
    """A conversation message as JSON text."""
    if isinstance(message, MESSAGE_TYPES):
        return message.to_json()
    checked: Any = message_adapter().validate_python(message)
    return str(checked.to_json())  # `Record.to_json`: a lone surrogate mended, not refused


def decode_messages(texts: Sequence[str]) -> list[Any]:
    """Messages back from their JSON texts, in order."""
    adapter = message_adapter()
    return [adapter.validate_json(text) for text in texts]


def encode_result(record: ResultRecord) -> str:
    """A result as JSON text: without its history when that is a conversation prefix.

    A value pydantic cannot serialize (an odd object a tool returned) is stored as its repr
    (a `memoryview` as its bytes' text, as the model read it) rather than failing the
    commit: history is a record, and the model already saw the text.
    """
    result = record.result
    exclude = _WITHOUT_HISTORY if record.history_length is not None else None
    return result.to_json(exclude=exclude, fallback=_stored_form)


def _stored_form(value: Any) -> Any:
    """What pydantic cannot serialize: a `memoryview` as the model read it (`bytes_text`;
    before, its repr `<memory at 0x...>`), anything else as its repr."""
    return bytes_text(value) if isinstance(value, memoryview) else repr(value)


def decode_result(
    text: str, messages: Sequence[Any], history_length: int | None
) -> InferenceResult:
    """A result back from its JSON text, its history a view of `messages` when it was one."""
    result = InferenceResult.from_json(text)
    if history_length is not None:
        result.history = HistoryView(messages, history_length)
    return result


def record_of(result: InferenceResult, conversation: HistoryView) -> ResultRecord:
    """The `ResultRecord` of a result made during a run whose conversation is `conversation`."""
    history = result.history
    if isinstance(history, HistoryView) and history.is_view_of(conversation):
        return ResultRecord(result, len(history))
    return ResultRecord(result, None)


def encode_summary(summary: Summary) -> str:
    """A conversation summary as JSON text."""
    return summary.to_json()


def decode_summary(text: str) -> Summary:
    """A conversation summary back from its JSON text."""
    return Summary.from_json(text)
