"""`PagedRecords`: rows decoded a page at a time, on first read, each row once."""

from __future__ import annotations

from collections.abc import Sequence

from network.threads.paged import PAGE_SIZE, PagedRecords


def records() -> tuple[PagedRecords[int], list[int]]:
    decoded: list[int] = []

    def decode(rows: Sequence[str]) -> list[int]:
        return [int(row) for row in rows]

    return PagedRecords(decode, decoded.append), decoded


def test_only_the_pages_read_are_decoded_once() -> None:
    paged, decoded = records()
    paged.add(str(n) for n in range(10 * PAGE_SIZE))
    assert decoded == [] and len(paged) == 10 * PAGE_SIZE
    assert paged[-1] == 10 * PAGE_SIZE - 1 and decoded == [PAGE_SIZE]
    assert paged[0] == 0 and paged[PAGE_SIZE - 1] == PAGE_SIZE - 1
    assert paged[-3:] == [10 * PAGE_SIZE - n for n in (3, 2, 1)]
    assert decoded == [PAGE_SIZE, PAGE_SIZE]  # pages 9 and 0, nothing again
    assert paged[PAGE_SIZE - 2 : PAGE_SIZE + 2] == [
        PAGE_SIZE - 2,
        PAGE_SIZE - 1,
        PAGE_SIZE,
        PAGE_SIZE + 1,
    ]
    assert sum(decoded) == 3 * PAGE_SIZE and paged.decoded_pages() == 3
    assert list(paged) == list(range(10 * PAGE_SIZE)) and sum(decoded) == 10 * PAGE_SIZE


def test_a_partial_last_page_is_completed_when_rows_arrive() -> None:
    paged, decoded = records()
    paged.add(["0", "1", "2"])
    assert paged[2] == 2 and decoded == [3]
    paged.add(["3", "4"])
    assert paged[4] == 4 and decoded == [3, 2]  # only the two new rows
    assert paged[::2] == [0, 2, 4] and list(paged) == [0, 1, 2, 3, 4]
