"""`PagedRecords`: a thread's stored rows, decoded a page at a time, only when read.

A store keeps a thread's records as JSON text. Decoding all of them to load a thread would make
the first load of a long thread in a process (or in a store without a warm cache) cost what
the thread's length costs. So a thread's records are kept as their rows (plain tuples and
strings: atomic, so the garbage collector does not trace into them) and decoded in pages of
`PAGE_SIZE` the first time something reads a record of that page: the newest turns a context
policy sends, `state.results[0]` a router looks at, the entries `history_of` reads. Decoded
pages are kept and shared by every later reader (records never change once committed).

Rows are only ever appended; a page decoded while it was the last, partial one is completed
when more rows arrive and it is read again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar, overload

T = TypeVar("T")

PAGE_SIZE = 64


class PagedRecords(Sequence[T]):
    """Rows decoded lazily by page with `decode(rows) -> records`; `count(n)` is told each
    time `n` rows are decoded (what a load cost, for tests and benchmarks to read)."""

    __slots__ = ("_count", "_decode", "_pages", "_rows")

    def __init__(
        self, decode: Callable[[Sequence[Any]], list[T]], count: Callable[[int], None]
    ) -> None:
        self._rows: list[Any] = []
        self._pages: list[list[T] | None] = []
        self._decode = decode
        self._count = count

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its records, decoded (a plain list): a `RunResult` of a thread run,
        whose results' histories are views of the thread's conversation, can be sent to
        another process."""
        return (list, (list(self),))

    @property
    def rows(self) -> Sequence[Any]:
        """The stored rows, undecoded (read-only)."""
        return self._rows

    def add(self, rows: Iterable[Any]) -> None:
        """Append stored rows (committed after those already held)."""
        self._rows.extend(rows)

    def decoded_pages(self) -> int:
        """How many pages have been decoded so far."""
        return sum(page is not None for page in self._pages)

    def _page(self, number: int) -> list[T]:
        pages = self._pages
        while len(pages) <= number:
            pages.append(None)
        start = number * PAGE_SIZE
        end = min(start + PAGE_SIZE, len(self._rows))
        page = pages[number]
        if page is None:
            page = pages[number] = self._decode(self._rows[start:end])
            self._count(end - start)
        elif len(page) < end - start:  # the last page, decoded before more rows came
            missing = self._rows[start + len(page) : end]
            page.extend(self._decode(missing))
            self._count(len(missing))
        return page

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self._rows))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            out: list[T] = []
            while start < stop:
                offset = start % PAGE_SIZE
                page = self._page(start // PAGE_SIZE)
                take = min(PAGE_SIZE - offset, stop - start)
                out.extend(page[offset : offset + take])
                start += take
            return out
        if index < 0:
            index += len(self._rows)
        if index < 0 or index >= len(self._rows):
            raise IndexError("record index out of range")
        return self._page(index // PAGE_SIZE)[index % PAGE_SIZE]

    def __iter__(self) -> Iterator[T]:
        index = 0
        while index < len(self._rows):  # rows appended meanwhile are read too, as a list's are
            page = self._page(index // PAGE_SIZE)
            offset = index % PAGE_SIZE
            yield from page[offset:]
            index += len(page) - offset

    def __repr__(self) -> str:
        return f"PagedRecords({len(self._rows)} rows, {self.decoded_pages()} pages decoded)"
