"""`HistoryView`: the conversation as a public, read-only view of its first messages."""

from __future__ import annotations

from network import State
from network.history.view import HistoryView


def test_the_conversation_is_public_and_read_only() -> None:
    state = State(messages=[{"role": "user", "content": "hi"}])
    frozen = state.history()
    state.append_messages([{"role": "assistant", "content": "hello"}])
    live = state.messages
    assert isinstance(frozen, HistoryView) and len(frozen) == 1 and len(live) == 2
    assert frozen.is_view_of(live) and live.prefix(1) == frozen[:]
    assert not hasattr(live, "append")
