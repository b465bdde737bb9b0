"""What a direct load reads (`network.threads.sql_fast`): after the records the process holds
when they are a prefix of this incarnation of the thread, else from the start."""

from __future__ import annotations

from network.threads.sql_fast import Header, start_at


def header(messages: int = 6, results: int = 2, rewinds: int | None = None) -> Header:
    return Header("t", "app", "u", 4, 100.0, 101.0, messages, results, "{}", rewinds)


def test_a_load_reads_after_what_the_process_holds_of_this_incarnation() -> None:
    assert start_at(header(), None) == (0, 0, 0)
    assert start_at(header(), ((100.0, 0), 3, 1, 0)) == (3, 1, 0)
    assert start_at(header(), ((100.0, 0), 6, 2, 1)) == (6, 2, 1)  # holds it all
    # deleted and created again, or rewound since: from the start
    assert start_at(header(), ((99.0, 0), 3, 1, 0)) == (0, 0, 0)
    assert start_at(header(rewinds=1), ((100.0, 0), 3, 1, 0)) == (0, 0, 0)
    # holds more than the thread has (it was cut back): from the start
    assert start_at(header(messages=2, results=1), ((100.0, 0), 3, 1, 0)) == (0, 0, 0)
