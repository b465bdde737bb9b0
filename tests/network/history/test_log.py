"""`RecordLog`: a shared, read-only prefix plus a run's own appends, made in O(1)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from network.history.log import RecordLog
from network.history.messages import Message, UserMessage


def test_it_reads_as_the_shared_prefix_then_its_own_items() -> None:
    base = [0, 1, 2, 3]
    log: RecordLog[int] = RecordLog(base, 3)
    log.append(10)
    log.extend([11, 12])
    base.append(4)  # the store goes on appending: the log still shares only its first 3
    assert len(log) == 6 and list(log) == [0, 1, 2, 10, 11, 12]
    assert log[2] == 2 and log[3] == 10 and log[-1] == 12 and log[-6] == 0
    assert log[1:5] == [1, 2, 10, 11] and log[4:] == [11, 12] and log[:2] == [0, 1]
    assert log[::2] == [0, 2, 11] and log[5:2] == []
    assert list(reversed(log)) == [12, 11, 10, 2, 1, 0]
    expected = [0, 1, 2, 10, 11, 12]
    assert log == expected and expected == log  # list == RecordLog too
    assert log != [0, 1, 2] and log.shared == 3 and log.own() == [10, 11, 12]
    with pytest.raises(IndexError):
        log[6]


def test_the_shared_part_cannot_be_changed_through_it() -> None:
    base = [0, 1]
    log: RecordLog[int] = RecordLog(base)
    log.append(2)
    for change in (
        lambda: log.__setitem__(0, 9),
        lambda: log.__delitem__(1),
        lambda: log.insert(0, 9),
    ):
        with pytest.raises(TypeError, match="read-only"):
            change()
    log[2] = 3
    del log[-1]
    assert base == [0, 1] and list(log) == [0, 1]
    with pytest.raises(ValueError):
        RecordLog(base, 5)


def test_it_validates_from_and_serializes_to_a_list() -> None:
    adapter = TypeAdapter(RecordLog[Message])
    log = adapter.validate_python([{"role": "user", "content": "hi"}])
    assert isinstance(log, RecordLog) and log == [UserMessage("hi")]
    shared = RecordLog([UserMessage("a")])
    shared.append(UserMessage("b"))
    assert adapter.dump_python(shared, mode="json")[1]["content"] == "b"
    assert adapter.validate_json(adapter.dump_json(shared)) == shared
