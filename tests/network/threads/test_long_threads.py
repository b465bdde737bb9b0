"""A run's own cost on a thread does not grow with the thread: counted, never timed.

A 10,000-call thread is built in one commit through the store API; a run on it must decode,
query and write as many records as a run on a 10-call thread does: only its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from agents import Agent, ContextPolicy, ScriptedModel, call, tool
from network import Network, ThreadRef
from network.threads import DecodedCache, MemoryStore, SQLStore, ThreadStore
from network.threads.paged import PAGE_SIZE
from tests.network.threads.long_thread import build_thread

pytestmark = pytest.mark.anyio


@tool
def lookup(n: int) -> str:
    """Look a number up."""
    return f"found {n}"


def network() -> Network:
    agent = Agent("a", tools=[lookup], model=ScriptedModel([call("lookup", n=1), "done"] * 4))

    def twice(ctx: Any) -> Any:
        return agent if ctx.call_count < 2 else None

    return Network("chat", agents=[agent], router=twice)


class Counts:
    """What one store did: records decoded, SQL statements, rows written."""

    def __init__(self) -> None:
        self.decoded = 0
        self.statements = 0
        self.rows_written = 0


@contextmanager
def counting(store: ThreadStore) -> Iterator[Counts]:
    counts = Counts()
    cache = store.decoded  # type: ignore[attr-defined]
    before = cache.decoded
    listener = None
    if isinstance(store, SQLStore):

        def listener(conn: Any, cursor: Any, statement: str, params: Any, ctx: Any, many: bool):
            counts.statements += 1
            if statement.lstrip().upper().startswith("INSERT"):
                counts.rows_written += len(params) if many else 1

        def direct(statement: str) -> None:  # the store's own driver paths (sql_links)
            counts.statements += 1
            counts.rows_written += statement.upper().count("INSERT INTO")

        event.listen(store.engine.sync_engine, "before_cursor_execute", listener)
        store.statement_listeners.append(direct)
    try:
        yield counts
    finally:
        if listener is not None:
            event.remove(store.engine.sync_engine, "before_cursor_execute", listener)
            store.statement_listeners.remove(direct)  # type: ignore[union-attr]
        counts.decoded = cache.decoded - before


async def run_cost(store: ThreadStore, thread_id: str) -> Counts:
    """The counts of the second of two runs on the thread (the first warms the process)."""
    await network().run("go", thread=ThreadRef(thread_id, store=store))
    with counting(store) as counts:
        result = await network().run("again", thread=ThreadRef(thread_id, store=store))
    assert result.output == "done"
    return counts


async def test_a_run_on_a_10000_call_thread_touches_what_one_on_10_calls_does(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    await build_thread(store, "short", 10)
    await build_thread(store, "long", 10_000)
    first = await store.get_thread("long")
    assert first is not None and first.result_count == 10_000
    assert len(first.messages) == 30_000

    short, long = await run_cost(store, "short"), await run_cost(store, "long")

    # The first run's records (a user message, 2 calls of 2 messages, 2 results) decoded once.
    assert long.decoded == short.decoded <= 7
    assert long.statements == short.statements
    assert long.rows_written == short.rows_written
    if isinstance(store, SQLStore):
        # SQLite: the load is one transaction (BEGIN, the header, the three scopes' keys with
        # the waiting calls and new summaries in one, COMMIT); nothing of the previous run
        # (its commits put it in the cache). Each of 2 commits is one transaction: BEGIN
        # IMMEDIATE, the revision bump, an insert each of messages and results, its
        # checkpoint's row (its commit mark), COMMIT. PostgreSQL: one statement each.
        assert long.statements == (16 if store.dialect == "sqlite" else 3)
    # Nothing was lost on the way: routers and readers see the whole thread.
    thread = await store.get_thread("long")
    assert thread is not None and thread.result_count == 10_004
    assert thread.results[0].input == "question 0"
    assert [m.content for m in thread.results[-1].history[-1:]] == ["found 1"]
    assert len(thread.results[5].history) == 16
    assert [len(r) for r in [await store.get_results("long", last=3)]] == [3]


@pytest.mark.parametrize("store_kind", ["sqlite", "postgres"])
async def test_a_store_opened_by_each_run_reuses_what_this_process_decoded(
    open_store: Callable[[], ThreadStore], store_url: str
) -> None:
    setup = open_store()
    assert isinstance(setup, SQLStore)
    await build_thread(setup, "long", 2_000)
    await setup.get_thread("long")
    cache = setup.decoded
    before = cache.decoded
    await network().run("go", thread=ThreadRef("long", store=store_url))  # a store of its own
    # nothing of the 6,000 messages decoded again but the newest page: a new message looks
    # at the last one for a call an answer's run left without a result (as any model request
    # sending the conversation's tail does; `network.history.unanswered`)
    first = cache.decoded - before
    assert first <= PAGE_SIZE
    await network().run("go", thread=ThreadRef("long", store=store_url))
    assert cache.decoded - before - first <= 7  # only the previous run's records


async def test_a_deleted_and_recreated_thread_is_not_served_from_the_cache(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    await build_thread(store, "t1", 5)
    assert len((await store.get_thread("t1")).messages) == 15  # type: ignore[union-attr]
    await store.delete_thread("t1")
    other = open_store()  # another process deletes and recreates it
    await build_thread(other, "t1", 2)
    thread = await store.get_thread("t1")
    assert thread is not None and len(thread.messages) == 6
    assert [r.input for r in thread.results] == ["question 0", "question 1"]


async def test_memory_store_results_after_a_time_and_last(store: ThreadStore) -> None:
    await build_thread(store, "t1", 20)
    chosen = await store.get_results("t1", after=1_000_000.0 + 14, last=2)
    assert [r.input for r in chosen or []] == ["question 18", "question 19"]
    assert isinstance(store, MemoryStore | SQLStore)


async def test_a_summary_is_stored_once_and_reused_on_every_store(store: ThreadStore) -> None:
    from agents import ContextPolicy

    await build_thread(store, "t1", 20)
    written: list[int] = []

    def summarize(messages: list[Any], previous: str | None) -> str:
        written.append(len(messages))
        return "they asked 20 questions"

    policy = ContextPolicy(max_messages=10, summarize=summarize)
    model = ScriptedModel(["ok"] * 3)
    chat = Network("chat", agents=[Agent("a", model=model)], context_policy=policy)
    for text in ("one", "two", "three"):
        await chat.run(text, thread=ThreadRef("t1", store=store))
    assert written == [57]
    thread = await store.get_thread("t1")
    assert thread is not None and len(thread.messages) == 66
    assert [(s.text, s.covers, s.by) for s in thread.summaries] == [
        ("they asked 20 questions", 57, "summarize")
    ]
    assert all(r.system[-1].content.endswith("20 questions") for r in model.requests)


@pytest.mark.parametrize("store_kind", ["sqlite", "postgres"])
async def test_a_cold_store_decodes_only_the_pages_a_run_reads(
    open_store: Callable[[], ThreadStore], store_url: str
) -> None:
    """A new process (a store whose cache is empty) on a 10,000-call thread: the run decodes
    the newest page its context policy sends and the pages its router reads, not the thread."""
    await build_thread(open_store(), "long", 10_000)
    cold = SQLStore(store_url, cache=DecodedCache())
    seen: list[tuple[int, str, str]] = []
    agent = Agent("a", tools=[lookup], model=ScriptedModel([call("lookup", n=1), "done"]))

    def route(ctx: Any) -> Any:
        results = ctx.state.results  # the whole thread: its first call and its newest
        seen.append((len(results), results[0].input, results[-1].agent))
        return agent if ctx.call_count < 2 else None

    chat = Network(
        "chat", agents=[agent], router=route, context_policy=ContextPolicy(max_messages=20)
    )
    try:
        result = await chat.run("again", thread=ThreadRef("long", store=cold))
        decoded = cold.decoded.decoded
        assert result.output == "done"
        # 30,000 messages and 10,000 calls stored; a page of each end read, and no more.
        assert decoded <= 3 * PAGE_SIZE
        assert seen == [(n, "question 0", "a") for n in (10_000, 10_001, 10_002)]
        results = result.state.results
        assert len(results) == 10_002 and len(result.state.messages) == 30_004
        assert results[5_000].input == "question 5000"  # older pages still read on demand
        assert results[-1].history[-1].content == "found 1"
        assert cold.decoded.decoded - decoded == PAGE_SIZE  # that page, and only it
        # The next run on the warm store reads nothing old again.
        before = cold.decoded.decoded
        chat = Network("chat", agents=[agent], router=lambda ctx: None if ctx.call_count else agent)
        agent.model = ScriptedModel(["bye"])
        await chat.run("bye", thread=ThreadRef("long", store=cold))
        assert cold.decoded.decoded == before + 1  # its newest message only (see above)
    finally:
        await cold.close()


@pytest.mark.parametrize("bad", [-1, 2.5, "3", True, float("nan"), None])
def test_a_cache_bound_that_is_no_count_is_refused_when_the_cache_is_made(bad: Any) -> None:
    """`DecodedCache(-1)` was taken, and the first run on a store using it failed with a
    KeyError ('dictionary is empty') from evicting a thread the cache did not hold."""
    from network.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="DecodedCache: max_threads must be"):
        DecodedCache(bad)
    assert DecodedCache(0).max_threads == 0  # no thread kept: every load reads the rows


@pytest.mark.parametrize(
    ("option", "value"),
    [("cache", "x"), ("cache", DecodedCache), ("table_prefix", 5), ("create_tables", "no")],
)
def test_an_sql_store_option_of_the_wrong_kind_is_refused_when_the_store_is_made(
    tmp_path: Path, option: str, value: Any
) -> None:
    """`cache="x"` was taken, and the first run failed with an AttributeError ('str' object
    has no attribute 'entry'); `create_tables="no"` created the tables (a true string)."""
    from network.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=f"SQLStore: {option} must be"):
        SQLStore(str(tmp_path / "t.db"), **{option: value})
