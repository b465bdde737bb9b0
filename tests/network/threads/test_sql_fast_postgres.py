"""A run's load and commits on PostgreSQL, one statement each
(`network.threads.sql_fast_postgres`): which commits take the one-statement path, many rows in
one statement, a failing commit writes nothing, waiting calls numbered after earlier ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from network import AssistantMessage, UserMessage
from network.errors import ThreadStoreError
from network.history.summary import Summary
from network.threads import Commit, PendingCall, SQLStore, ThreadStore
from network.threads.sql_fast import Encoded
from network.threads.sql_fast_postgres import PostgresFast, takes_fast_path
from tests.network.threads.test_conformance import commit_exchange, shared

pytestmark = [pytest.mark.anyio]


def encoded(commit: Commit, summaries: list[Any] | None = None) -> Encoded:
    return Encoded("t", commit, [], [], summaries or [], 0.0)


def test_claims_shared_writes_appends_and_summaries_take_the_transaction_path() -> None:
    assert takes_fast_path(encoded(Commit(revision=0, state={"k": "1"}, removed=["j"])))
    call = PendingCall("c1", "client_tool", None, {})
    assert takes_fast_path(encoded(Commit(revision=0, pending=[call])))
    assert not takes_fast_path(encoded(Commit(revision=0, answered={"c1": "{}"})))
    assert not takes_fast_path(encoded(Commit(revision=0, shared=[shared("user:k", 1)])))
    assert not takes_fast_path(encoded(Commit(revision=0, append_only=True)))
    summary = Summary(text="s", covers=2)
    assert not takes_fast_path(encoded(Commit(revision=0, summaries=[summary]), [(2, "{}")]))


@pytest.mark.parametrize("store_kind", ["postgres"])
async def test_many_rows_in_one_statement_and_a_failing_one_writes_nothing(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    assert isinstance(store, SQLStore) and isinstance(store._fast, PostgresFast)
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    await store.create_thread("t", app_name="app")
    messages = [UserMessage(f"m{i}") if i % 2 else AssistantMessage(f"m{i}") for i in range(1000)]
    state = {f"k{i}": f'"{i}"' for i in range(400)}
    seen.clear()
    assert await store.append_results("t", Commit(revision=0, messages=messages, state=state)) == 1
    assert len(seen) == 1  # one statement, one round trip
    doomed = Commit(revision=1, messages=[UserMessage("lost")], state={"k": "a\x00b"})
    with pytest.raises(ThreadStoreError):  # PostgreSQL refuses NUL in text: nothing lands
        await store.append_results("t", doomed)
    thread = await open_store().get_thread("t")
    assert thread is not None and thread.revision == 1
    assert [m.content for m in thread.messages] == [f"m{i}" for i in range(1000)]
    assert thread.state == {f"k{i}": str(i) for i in range(400)}
    assert await commit_exchange(store, "t", 1, "fine") == 2


@pytest.mark.parametrize("store_kind", ["postgres"])
async def test_waiting_calls_are_numbered_after_earlier_ones(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    await store.create_thread("t", app_name="app")
    first = PendingCall("c1", "client_tool", "r1", {"id": "c1", "name": "ask", "arguments": {}})
    second = PendingCall("c2", "client_tool", "r1", {"id": "c2", "name": "ask", "arguments": {}})
    revision = await store.append_results("t", Commit(revision=0, pending=[first]))
    revision = await store.append_results("t", Commit(revision=revision, pending=[second]))
    thread = await open_store().get_thread("t")
    assert thread is not None and [entry.id for entry in thread.pending] == ["c1", "c2"]
    assert thread.pending[1].to_text(3) == second.to_text(3)
