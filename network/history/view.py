"""A read-only view of the first N messages of a run's conversation.

The conversation may be a list, a `RecordLog` (a thread run's) or a store's lazily decoded
records: any sequence that only grows.

The conversation only ever grows, so a prefix of it never changes: each InferenceResult can
keep the history it was sent as a view instead of a copy. That keeps a step's cost and memory
independent of how long the run has been going. It serializes as a plain list of messages.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

from network.history.messages import Message

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema


class HistoryView(Sequence[Any]):
    """The first `length` messages of an append-only list (all of them when `length` is None)."""

    __slots__ = ("_length", "_messages")

    def __init__(self, messages: Sequence[Any], length: int | None = None) -> None:
        self._messages = messages
        self._length = length

    def prefix(self, length: int) -> HistoryView:
        """A view of the first `length` messages of the same list."""
        return HistoryView(self._messages, length)

    def is_view_of(self, other: HistoryView) -> bool:
        """Whether both views look into the same list (one conversation)."""
        return self._messages is other._messages

    def __len__(self) -> int:
        return len(self._messages) if self._length is None else self._length

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))  # no copy of the whole prefix
            return self._messages[start:stop:step]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("history index out of range")
        return self._messages[index]

    def __iter__(self) -> Iterator[Any]:
        if self._length is None:
            return iter(self._messages)
        return iter(self._messages[: self._length])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return id(self)

    def to_list(self) -> list[Any]:
        """A list copy of the messages in view."""
        return list(self)

    def __repr__(self) -> str:
        return f"HistoryView({len(self)} messages)"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema  # noqa: PLC0415 (pydantic: first validation only)

        list_schema = handler.generate_schema(list[Message])
        return core_schema.no_info_after_validator_function(
            lambda value: value,
            list_schema,
            serialization=core_schema.wrap_serializer_function_ser_schema(
                lambda value, serialize: serialize(list(value)), schema=list_schema
            ),
        )
