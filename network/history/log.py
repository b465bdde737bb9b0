"""`RecordLog`: a list of records whose older part is shared, read-only, with other readers.

A run on a thread starts from the thread's conversation and agent calls, thousands of records
that never change once committed. Copying their list for every run would make each run cost
what the thread's length costs (the copy, and the garbage collector tracing the copy's
references again and again while it is young). So a run's list is a `RecordLog`: the first
`shared` items of a sequence the store keeps (and may go on appending to, never changing what
is there), followed by the run's own list, where appends go. Making one is O(1) whatever the
thread's length, and the only container the run allocates is its own short list.

It behaves as a list for reading (`len`, indexing, slicing to a list, iteration, `==` with any
sequence) and for appending; the shared part cannot be changed through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableSequence, Sequence
from itertools import chain, islice
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema


T = TypeVar("T")


class RecordLog(MutableSequence[T]):
    """`base[:shared]` (read-only, shared) followed by this log's own items."""

    __slots__ = ("_base", "_own", "_shared")

    def __init__(self, base: Sequence[T] = (), shared: int | None = None) -> None:
        self._base = base
        self._shared = len(base) if shared is None else shared
        if not 0 <= self._shared <= len(base):
            raise ValueError(f"a RecordLog cannot share {shared} of {len(base)} items")
        self._own: list[T] = []

    @property
    def shared(self) -> int:
        """How many of the first items are the shared, read-only part."""
        return self._shared

    def own(self) -> list[T]:
        """A copy of the items appended to this log (after the shared part)."""
        return list(self._own)

    def __len__(self) -> int:
        return self._shared + len(self._own)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        shared = self._shared
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            if stop <= start:
                return []
            if start >= shared:
                return self._own[start - shared : stop - shared]
            head = list(self._base[start : min(stop, shared)])
            if stop > shared:
                head.extend(self._own[: stop - shared])
            return head
        if index < 0:
            index += len(self)
        if index < 0 or index >= len(self):
            raise IndexError("RecordLog index out of range")
        if index < shared:
            return self._base[index]
        return self._own[index - shared]

    def __iter__(self) -> Iterator[T]:
        # islice: the base may grow meanwhile (a later commit), and only `shared` are ours
        return chain(islice(self._base, self._shared), self._own)

    def __reversed__(self) -> Iterator[T]:
        for index in range(len(self) - 1, -1, -1):
            yield self[index]

    # -- appending (the own part only) -----------------------------------------------------

    def append(self, value: T) -> None:
        self._own.append(value)

    def extend(self, values: Iterable[T]) -> None:
        self._own.extend(values)

    def _own_index(self, index: int) -> int:
        if index < 0:
            index += len(self)
        if index < self._shared:
            raise TypeError("the records a thread was loaded with are read-only")
        return index - self._shared

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            raise TypeError("a RecordLog takes no slice assignment")
        self._own[self._own_index(index)] = value

    def __delitem__(self, index: Any) -> None:
        if isinstance(index, slice):
            raise TypeError("a RecordLog takes no slice deletion")
        del self._own[self._own_index(index)]

    def insert(self, index: int, value: T) -> None:
        self._own.insert(max(self._own_index(min(index, len(self))), 0), value)

    # -- comparing and showing -------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RecordLog({self._shared} shared + {len(self._own)} own)"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its items (the store's sequence stays behind): a `RunResult` of a thread
        run can be sent to another process, which gets the same records, no longer shared."""
        return (_unpickled, (list(self), self._shared))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema  # noqa: PLC0415 (pydantic: first validation only)

        args = getattr(source, "__args__", None)
        list_schema = handler.generate_schema(list[args[0]] if args else list[Any])  # type: ignore[valid-type]
        return core_schema.no_info_after_validator_function(
            lambda value: value if isinstance(value, RecordLog) else _adopt(value),
            list_schema,
            serialization=core_schema.wrap_serializer_function_ser_schema(
                lambda value, serialize: serialize(list(value)), schema=list_schema
            ),
        )


def _adopt(values: list[Any]) -> RecordLog[Any]:
    log: RecordLog[Any] = RecordLog()
    log._own = values  # validated into a fresh list: no copy needed
    return log


def _unpickled(items: list[Any], shared: int) -> RecordLog[Any]:
    """A `RecordLog` back from `__reduce__`: the first `shared` items its read-only part."""
    log: RecordLog[Any] = RecordLog(items[:shared])
    log._own.extend(items[shared:])
    return log
