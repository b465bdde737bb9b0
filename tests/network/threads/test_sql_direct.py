"""`SQLStore`'s direct paths (`network.threads.sql_direct`) on SQLite and PostgreSQL: a load
whose records another reader reset meanwhile is read again; one statement runs on its own on
the store's connections; the listeners see the statements of a run, which reads its thread
once and commits once per agent call."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest
from sqlalchemy import event

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, ThreadRef
from network.errors import ThreadStoreError
from network.history.messages import UserMessage
from network.threads import Commit, SQLStore, ThreadExistsError, ThreadStore
from network.threads.decoded import DecodedCache
from network.threads.sql_fast_postgres import PostgresFast
from network.threads.sql_fast_sqlite import SQLiteFast
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


async def test_a_thread_created_holding_its_first_messages_is_one_transaction(
    open_store: Callable[[], ThreadStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`create_and_get` with `messages` (a served run's new thread and its user's message):
    one transaction on SQLite, one statement on PostgreSQL, leaving the records a creation
    then a commit of the messages leave (compared row for row), read the same by a store
    that holds nothing of it; all or nothing: a taken id or a failure writes nothing."""
    store = open_store()
    assert isinstance(store, SQLStore)
    words = [UserMessage("hello", id="u1"), UserMessage("again", id="u2")]
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    thread = await store.create_and_get(
        "new", app_name="app", user_id="alice", messages=words, run_id="r1"
    )
    assert thread is not None and (thread.revision, thread.message_count) == (1, 2)
    assert [(m.id, m.content) for m in thread.messages] == [("u1", "hello"), ("u2", "again")]
    if store.dialect == "sqlite":  # one transaction (PRAGMAs set its sync level)
        work = [sql.split()[0] for sql in seen if not sql.startswith("PRAGMA")]
        assert (work[0], work[-1], work.count("BEGIN"), work.count("COMMIT")) == (
            "BEGIN",
            "COMMIT",
            1,
            1,
        )
    else:  # one statement
        assert len(seen) == 1
    await store.create_thread("old", app_name="app", user_id="alice")
    await store.append_results("old", Commit(revision=0, run_id="r1", messages=words))

    async def records(thread_id: str) -> list[list[tuple[object, ...]]]:
        t = store.tables
        tables = [
            (t.threads.name, "revision, message_count, result_count, user_id, meta"),
            (t.messages.name, "seq, run_id, data"),
            (
                t.timeline.commits.name,
                "revision, calls, results, messages, summaries, run_id, keys, effects",
            ),
        ]
        found = []
        for table, columns in tables:
            rows = await store.statement(
                f"SELECT {columns} FROM {table} WHERE thread_id = ?1 ORDER BY 1",
                f"SELECT {columns} FROM {table} WHERE thread_id = $1 ORDER BY 1",
                (thread_id,),
            )
            found.append([tuple(row) for row in rows])
        return found

    assert await records("new") == await records("old")
    cold = SQLStore(store.url, cache=DecodedCache())
    try:
        again = await cold.get_thread("new")
        assert again is not None and again.revision == 1
        assert list(again.messages) == list(thread.messages)
        assert await commit_exchange(cold, "new", 1, "hi") == 2
    finally:
        await cold.close()
    before = await records("old")
    with pytest.raises(ThreadExistsError):
        await store.create_and_get("old", app_name="app", messages=words, run_id="r2")
    assert await records("old") == before
    # a failure after the thread's row was written takes the row back with it
    if store.dialect == "sqlite":

        def broken(*args: object) -> None:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(SQLiteFast, "_record", broken)
    else:
        fast = store._fast
        assert isinstance(fast, PostgresFast)
        monkeypatch.setattr(
            fast, "create_keeping_sql", fast.create_keeping_sql.replace("$4, 0, 0", "$4, 1 / 0, 0")
        )
    with pytest.raises(ThreadStoreError):
        await store.create_and_get("lost", app_name="app", messages=words, run_id="r3")
    assert await store.get_thread("lost") is None


@tool
def note(text: str, ctx: ToolContext) -> str:
    """Note something."""
    ctx.kv.set("notes", [*ctx.kv.get("notes", []), text])
    return "noted"


async def test_a_run_reads_its_thread_once_and_commits_once_per_agent_call(
    open_store: Callable[[], ThreadStore],
) -> None:
    """A run of three agent calls (two tool calls that write a thread key, then an answer) on a
    thread this process holds asks the database four times: one transaction (SQLite) or one
    statement (PostgreSQL) reads the thread, one commits each agent call, and nothing else
    runs: no second read, no read-back after a write, nothing outside the store's own
    connections (SQLAlchemy's engine sees no statement)."""
    replies = [call("note", text="one"), call("note", text="two"), "done"]
    agent = Agent("scribe", tools=[note], model=ScriptedModel(replies * 2))
    network = Network(
        "notes", agents=[agent], router=lambda ctx: agent if ctx.call_count < 3 else None
    )
    store = open_store()
    assert isinstance(store, SQLStore)
    on = ThreadRef("t", store=store)
    assert (await network.run("first", thread=on)).output == "done"  # the process holds it
    direct: list[str] = []
    engine: list[str] = []

    def through_engine(_c: object, _cur: object, sql: str, *_rest: object) -> None:
        engine.append(sql)

    store.statement_listeners.append(direct.append)
    event.listen(store.engine.sync_engine, "before_cursor_execute", through_engine)
    try:
        result = await network.run("second", thread=on)
    finally:
        event.remove(store.engine.sync_engine, "before_cursor_execute", through_engine)
    assert result.output == "done" and result.state.kv.get("notes") == ["one", "two"] * 2
    assert engine == []
    threads = store.tables.threads.name
    reads = [sql for sql in direct if sql.lstrip().startswith("SELECT") and threads in sql]
    if store.dialect == "sqlite":
        begins = [sql for sql in direct if sql.startswith("BEGIN")]
        assert begins == ["BEGIN"] + ["BEGIN IMMEDIATE"] * 3  # the load, then each call's
        assert len(reads) == 1  # the thread's row, once
    else:
        assert len(direct) == 4 and direct[0].lstrip().startswith("SELECT")
        assert all(sql.startswith("WITH bump AS") for sql in direct[1:])
    thread = await store.get_thread("t")
    assert thread is not None and len(thread.results) == 6


async def test_a_commit_names_only_the_tables_it_writes(
    open_store: Callable[[], ThreadStore],
) -> None:
    """A commit's statements name the thread keys', their history's and the waiting calls'
    tables only when it writes there (PostgreSQL's one statement is made of the parts the
    commit needs: a part run on empty arrays still opens and locks its table), and each
    shape reads back whole from a store that holds nothing of the thread."""
    store = open_store()
    assert isinstance(store, SQLStore)
    await store.create_thread("t", app_name="app")
    keys_table = store.tables.thread_state.name
    history = store.tables.timeline.state_history.name
    waiting = store.tables.pending.name
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    shapes = [
        ({}, [], set()),  # an answer: messages and a call only
        ({"a": "1", "b": "2"}, [], {keys_table, history}),
        ({}, ["a"], {keys_table, history}),  # a removal alone
        ({"c": "3"}, ["b"], {keys_table, history}),
    ]
    revision = 0
    for state, removed, named in shapes:
        seen.clear()
        said = UserMessage(content=f"turn {revision}")
        commit = Commit(revision, messages=[said], state=state, removed=removed)
        revision = await store.append_results("t", commit)
        skipped = ("PRAGMA", "BEGIN", "COMMIT", "SELECT")
        commit_text = " ".join(sql for sql in seen if not sql.startswith(skipped))
        for table in (keys_table, history, waiting):
            assert (table in commit_text) == (table in named), (state, removed, table)
    cold = open_store()
    thread = await cold.get_thread("t")
    assert thread is not None and thread.revision == 4
    assert thread.state == {"c": 3}
    assert [m.content for m in thread.messages] == [f"turn {n}" for n in range(4)]
