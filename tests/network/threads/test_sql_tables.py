"""The SQL store's tables (`network.threads.sql_tables`): no index of the threads table holds a
column a commit changes (a commit rewrites the thread's row, never one of its index entries),
the calls are indexed by their key only (no index a commit writes and no query reads), and a
database an older version made, whose owner index held `updated_at` and whose calls were
indexed by time, is brought up to date on first use, its threads still listed newest first.

The commits (time travel's checkpoints) are kept by their key alone, in one b-tree on SQLite (a
`WITHOUT ROWID` table); a database whose commits were a table with a rowid and an index on
their calls count opens, reads back and travels its threads, and takes new commits."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import inspect

from network.threads import Commit, SQLStore
from network.threads.decoded import DecodedCache
from tests.network.threads.test_conformance import commit_exchange, exchange

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_kind", ["sqlite", "postgres"])]

NEVER_CHANGED = {"thread_id", "app_name", "user_id"}  # what a commit leaves in a thread's row


async def threads_indexes(store: SQLStore, name: str | None = None) -> dict[str, list[str]]:
    """Every index of the store's threads table (or of the table `name`) but its primary
    key's: its name, its columns."""
    name = name or store.tables.threads.name

    def read(connection: Any) -> dict[str, list[str]]:
        found = inspect(connection).get_indexes(name)
        return {index["name"]: list(index["column_names"]) for index in found}

    async with store.engine.connect() as conn:
        return await conn.run_sync(read)


async def test_no_index_of_the_threads_table_holds_what_a_commit_changes(
    store_url: str,
) -> None:
    store = SQLStore(store_url)
    try:
        await store.setup()
        indexes = await threads_indexes(store)
    finally:
        await store.close()
    assert indexes, "the threads are indexed by owner"
    for name, columns in indexes.items():
        assert set(columns) <= NEVER_CHANGED, (name, columns)


async def test_the_calls_are_indexed_by_their_key_only(store_url: str) -> None:
    """Every commit writes its calls' index entries: one on their time was written by each
    and read by no query (`get_results(after=...)` picks them from the decoded rows)."""
    store, cold = SQLStore(store_url), SQLStore(store_url, cache=DecodedCache())
    thread = f"calls-{time.time_ns()}"
    try:
        await store.setup()
        indexes = await threads_indexes(store, store.tables.results.name)
        await store.create_thread(thread, app_name="app")
        await commit_exchange(store, thread, 0, "one")
        time.sleep(0.002)
        cutoff = time.time()
        time.sleep(0.002)
        await commit_exchange(store, thread, 1, "two")
        later = await cold.get_results(thread, after=cutoff)
    finally:
        await store.close()
        await cold.close()
    assert indexes == {}
    assert later is not None and [r.output[0].content for r in later] == ["two"]


async def test_an_older_databases_owner_index_is_replaced_on_first_use(store_url: str) -> None:
    older = SQLStore(store_url)
    threads = older.tables.threads.name
    prefix = threads.removesuffix("threads")
    try:
        await older.setup()
        async with older.engine.begin() as conn:  # the tables as the older version made them
            await conn.exec_driver_sql(f"DROP INDEX {prefix}threads_by_owner")
            await conn.exec_driver_sql(
                f"CREATE INDEX {prefix}threads_owner ON {threads} (app_name, user_id, updated_at)"
            )
            await conn.exec_driver_sql(
                f"CREATE INDEX {prefix}results_at ON {prefix}results (thread_id, at)"
            )
            await conn.exec_driver_sql(f"DELETE FROM {threads}")
        for name in ("first", "second", "third"):
            await older.create_thread(name, app_name="notes", user_id="ada")
            time.sleep(0.002)  # distinct update times
        assert f"{prefix}threads_owner" in await threads_indexes(older)
    finally:
        await older.close()

    store = SQLStore(store_url)
    try:
        listed = await store.list_threads(app_name="notes", user_id="ada")
        indexes = await threads_indexes(store)
        calls = await threads_indexes(store, store.tables.results.name)
    finally:
        await store.close()
    assert [info.thread_id for info in listed] == ["third", "second", "first"]
    assert calls == {}
    assert f"{prefix}threads_owner" not in indexes
    assert indexes[f"{prefix}threads_by_owner"] == ["app_name", "user_id"]


# The commits table as the version before this one made it: a table with a rowid, its key's
# index beside it, and an index on the calls count that every commit wrote.
OLDER_COMMITS = (
    "CREATE TABLE {name} (thread_id VARCHAR NOT NULL, revision INTEGER NOT NULL,"
    " calls INTEGER NOT NULL, results INTEGER NOT NULL, messages INTEGER NOT NULL,"
    " summaries INTEGER, at DOUBLE PRECISION NOT NULL, run_id VARCHAR, keys TEXT NOT NULL,"
    " effects TEXT, PRIMARY KEY (thread_id, revision))",
    "CREATE INDEX {prefix}commits_results ON {name} (thread_id, results)",
)


async def commits_ddl(store: SQLStore) -> str:
    """The commits table's `CREATE TABLE` on SQLite ('' on PostgreSQL)."""
    if store.dialect != "sqlite":
        return ""
    async with store.engine.connect() as conn:
        found = await conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE name = ?", (store.tables.timeline.commits.name,)
        )
        return str(found.scalar_one())


async def commit_calls(store: SQLStore, thread: str, texts: list[str]) -> None:
    """One commit per text: a call, its messages, and the thread key `last` set to it."""
    conversation: list[Any] = []
    for revision, said in enumerate(texts):
        messages, record = exchange(conversation, said)
        commit = Commit(revision, messages=messages, results=[record], state={"last": f'"{said}"'})
        await store.append_results(thread, commit)


async def test_the_commits_are_kept_by_their_key_alone(store_url: str) -> None:
    """Each commit writes one row of the commits table: on SQLite into one b-tree (no rowid
    table beside its key's index), on both with no index on the calls count."""
    store = SQLStore(store_url, table_prefix=f"keyed{time.time_ns()}_")
    try:
        await store.setup()
        indexes = await threads_indexes(store, store.tables.timeline.commits.name)
        ddl = await commits_ddl(store)
    finally:
        await store.close()
    assert indexes == {}
    assert store.dialect != "sqlite" or ddl.rstrip().endswith("WITHOUT ROWID")


async def test_an_older_databases_commits_are_read_travelled_and_added_to(
    store_url: str,
) -> None:
    prefix = f"older{time.time_ns()}_"
    older = SQLStore(store_url, table_prefix=prefix)
    name = older.tables.timeline.commits.name
    try:
        await older.setup()
        async with older.engine.begin() as conn:  # the commits as the older version made them
            await conn.exec_driver_sql(f"DROP TABLE {name}")
            for statement in OLDER_COMMITS:
                await conn.exec_driver_sql(statement.format(name=name, prefix=prefix))
        await older.create_thread("t", app_name="notes")
        await commit_calls(older, "t", ["one", "two", "three"])
        assert f"{prefix}commits_results" in await threads_indexes(older, name)
    finally:
        await older.close()

    store = SQLStore(store_url, table_prefix=prefix)
    try:
        thread = await store.get_thread("t")
        checkpoints = await store.checkpoints("t")
        at_one = await store.state_at("t", 1)
        await store.rewind_thread("t", to=0, kept_as="t-whole")
        await commit_exchange(store, "t", 4, "four")
        after = await store.get_thread("t")
        kept = await store.get_thread("t-whole")
        indexes = await threads_indexes(store, name)
        ddl = await commits_ddl(store)
    finally:
        await store.close()
    assert thread is not None and thread.state == {"last": "three"}
    assert [r.output[0].content for r in thread.results] == ["one", "two", "three"]
    assert checkpoints is not None and [c.revision for c in checkpoints] == [1, 2, 3]
    assert at_one is not None and at_one.state == {"last": "two"}
    assert after is not None and [r.output[0].content for r in after.results] == ["one", "four"]
    assert kept is not None and len(kept.results) == 3
    assert f"{prefix}commits_results" not in indexes  # dropped on first use
    assert "WITHOUT ROWID" not in ddl  # its rows are not rewritten


async def test_every_checkpoint_is_found_from_the_primary_key(store_url: str) -> None:
    """`state_at` finds the commit that saved each call by bisecting the revisions: on a
    thread of commits with one call, two calls, none, and a rewind between them, each
    checkpoint it reads is the one the whole listing (every commit read in order) names."""
    store = SQLStore(store_url, table_prefix=f"bisect{time.time_ns()}_")
    conversation: list[Any] = []
    revision = 0

    async def commit(*texts: str, key: str | None = None) -> None:
        nonlocal revision
        messages: list[Any] = []
        records = []
        for said in texts:
            added, record = exchange(conversation, said)
            messages.extend(added)
            records.append(record)
        state = {key: '"x"'} if key else {}
        made = Commit(revision, messages=messages, results=records, state=state)
        revision = await store.append_results("t", made)

    try:
        await store.create_thread("t", app_name="notes")
        for n in range(9):
            await commit(f"call {n}")
            if n % 3 == 0:
                await commit(key=f"k{n}")  # a router's writes: no call
            if n % 4 == 1:
                await commit(f"call {n}a", f"call {n}b")  # two calls in one commit
        await store.rewind_thread("t", to=7, kept_as="t-kept")
        thread = await store.get_thread("t")
        assert thread is not None
        revision, conversation = thread.revision, list(thread.messages)
        for n in range(5):
            await commit(f"after {n}")
        listed = await store.checkpoints("t")
        found = [await store.state_at("t", i) for i in range(len(listed or []))]
    finally:
        await store.close()
    assert listed is not None and len(listed) == 13
    assert [state.checkpoint if state else None for state in found] == listed
