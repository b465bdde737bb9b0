"""The announcer (`network.durable.announcer`): announcements of a short window go out in one
statement per channel, its thread sleeps while nothing is pending and ends when idle, `close`
sends what is pending, and a refused statement does not stop later ones. (Heard by a real
listener: `test_event_log.py`.)"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from network.durable import announcer as announcing
from network.durable.announcer import Announcer


class Database:
    """Records each statement instead of sending it (the first `refuse` are refused)."""

    def __init__(self, refuse: int = 0) -> None:
        self.sent: list[dict[str, Any]] = []
        self.refuse = refuse
        self.arrived = threading.Event()

    def execute(self, sql: str, params: dict[str, Any]) -> list[Any]:
        assert "pg_notify" in sql
        if self.refuse:
            self.refuse -= 1
            raise RuntimeError("refused")
        self.sent.append(params)
        self.arrived.set()
        return []


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(announcing, "ANNOUNCE_EVERY", 0.2)
    monkeypatch.setattr(announcing, "IDLE_EXIT", 0.5)


def wait_for(check: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_announcements_of_one_window_go_out_in_one_statement_per_channel() -> None:
    db = Database()
    sender = Announcer(db)  # type: ignore[arg-type]
    for payload in ["b::events", "a::events", "b::events"]:
        sender.announce("streams", payload)
    sender.announce("other", "x")
    wait_for(lambda: len(db.sent) == 2)
    assert sorted(db.sent, key=lambda p: p["channel"]) == [
        {"channel": "other", "payloads": ["x"]},
        {"channel": "streams", "payloads": ["a::events", "b::events"]},  # once each
    ]
    assert sender.sent == 2
    sender.close()


def test_the_thread_ends_when_idle_and_the_next_announcement_starts_another() -> None:
    db = Database()
    sender = Announcer(db)  # type: ignore[arg-type]
    sender.announce("streams", "a::events")
    wait_for(lambda: db.sent)
    first = sender._thread
    assert first is not None
    wait_for(lambda: not first.is_alive())  # nothing pending for IDLE_EXIT: it ended
    sender.announce("streams", "b::events")
    wait_for(lambda: len(db.sent) == 2)
    assert sender._thread is not first
    assert db.sent[1] == {"channel": "streams", "payloads": ["b::events"]}
    sender.close()


def test_close_sends_what_is_pending_at_once_and_then_announces_nothing() -> None:
    db = Database()
    sender = Announcer(db)  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(announcing, "ANNOUNCE_EVERY", 3600.0)  # would wait an hour
        sender.announce("streams", "a::events")
        started = time.monotonic()
        sender.close()
    assert time.monotonic() - started < 5
    assert db.sent == [{"channel": "streams", "payloads": ["a::events"]}]
    sender.announce("streams", "b::events")  # closed: dropped
    time.sleep(0.3)
    assert len(db.sent) == 1


def test_a_refused_statement_is_dropped_and_later_ones_go_out() -> None:
    db = Database(refuse=1)
    sender = Announcer(db)  # type: ignore[arg-type]
    sender.announce("streams", "a::events")
    wait_for(lambda: sender.sent == 1 and db.refuse == 0)
    sender.announce("streams", "b::events")
    wait_for(lambda: db.sent)
    assert db.sent == [{"channel": "streams", "payloads": ["b::events"]}]
    sender.close()
