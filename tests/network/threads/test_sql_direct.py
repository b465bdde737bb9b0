"""`SQLStore`'s direct paths (`network.threads.sql_direct`) on SQLite and PostgreSQL: a load
whose records another reader reset meanwhile is read again; one statement runs on its own on
the store's connections; the listeners see the statements of a run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from network.threads import Commit, SQLStore, ThreadExistsError, ThreadStore
from tests.network.threads.test_conformance import commit_exchange, shared

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_kind", ["sqlite", "postgres"])]


async def test_a_load_whose_records_were_reset_meanwhile_reads_again(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    assert isinstance(store, SQLStore)
    await store.create_thread("t", app_name="app")
    revision = await commit_exchange(store, "t", 0, "one")
    await store.get_thread("t")  # the process holds the thread's records
    await commit_exchange(store, "t", revision, "two")
    # another reader of the process resets the cache's entry between the read and its use
    entry = store.decoded.entry("t")
    assert entry is not None
    real = store._thread_of
    calls: list[int] = []

    def reset_first(loaded: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            store.decoded.forget("t")
            store.decoded.thread("t", "another incarnation", 0, 0)
        return real(loaded)  # type: ignore[arg-type]

    store._thread_of = reset_first  # type: ignore[method-assign]
    thread = await store.get_thread("t")
    assert thread is not None and len(calls) == 2
    assert [m.content for m in thread.messages] == [
        "question one",
        "one",
        "question two",
        "two",
    ]


async def test_one_statement_on_its_own(open_store: Callable[[], ThreadStore]) -> None:
    store = open_store()
    assert isinstance(store, SQLStore)
    await store.setup()
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    threads = store.tables.threads.name
    rows = await store.statement(
        f"SELECT count(*) FROM {threads} WHERE thread_id = ?1",
        f"SELECT count(*) FROM {threads} WHERE thread_id = $1",
        ("absent",),
        durable=False,
    )
    assert [tuple(row) for row in rows] == [(0,)]
    assert any(threads in sql for sql in seen)


async def test_a_thread_created_and_read_back_in_one_go_has_its_users_and_apps_keys(
    open_store: Callable[[], ThreadStore],
) -> None:
    """`create_and_get` (a served run opening a thread it found missing): one transaction on
    SQLite, one statement on PostgreSQL, the new thread with its user's and app's keys; a
    taken id is `ThreadExistsError`, and the next load reads what was created."""
    store = open_store()
    assert isinstance(store, SQLStore)
    await store.create_thread("old", app_name="app", user_id="alice")
    keys = [shared("user:name", "Alice"), shared("app:motd", "hello")]
    await store.append_results("old", Commit(revision=0, shared=keys))
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    thread = await store.create_and_get("new", app_name="app", user_id="alice")
    assert thread is not None and (thread.thread_id, thread.user_id) == ("new", "alice")
    assert (thread.revision, list(thread.messages), thread.state) == (0, [], {})
    assert thread.user_state == {"user:name": "Alice"} and thread.app_state == {"app:motd": "hello"}
    work = [sql for sql in seen if not sql.startswith(("PRAGMA", "BEGIN", "COMMIT"))]
    assert len(work) == (2 if store.dialect == "sqlite" else 1)  # the insert, the keys
    with pytest.raises(ThreadExistsError):
        await store.create_and_get("new", app_name="app", user_id="bob")
    assert await commit_exchange(store, "new", 0, "hi") == 1
    again = await open_store().get_thread("new")
    assert again is not None and again.user_id == "alice" and len(again.messages) == 2
