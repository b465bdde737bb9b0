"""The store conformance suite: every check runs against memory, SQLite and PostgreSQL.

A store someone writes for themselves can be held to the same contract by running these tests
with their store in the `store` fixture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from network import AssistantMessage, InferenceResult, StaleThreadError, UserMessage
from network.history.view import HistoryView
from network.state.handlers import merge_lists, replace_values
from network.state.schema import build_spec
from network.threads import (
    DELETED,
    Commit,
    ResultRecord,
    SharedWrite,
    ThreadExistsError,
    ThreadNotFoundError,
    ThreadStore,
)
from network.threads.thread_data import encode_value

pytestmark = pytest.mark.anyio


def shared(key: str, value: Any, handler: Callable[[Any, Any], Any] | None = None) -> SharedWrite:
    spec = build_spec(key, list[str] if handler is merge_lists else Any, None)
    return SharedWrite(key, value, handler or replace_values, spec)


def exchange(conversation: list[Any], text: str, at: float = 0.0) -> tuple[list[Any], Any]:
    """A user message and an agent's answer: the messages to commit and the result record."""
    question = UserMessage(content=f"question {text}")
    conversation.append(question)
    result = InferenceResult(
        agent="writer",
        input=question.content,
        history=HistoryView(conversation, len(conversation)),
        output=[AssistantMessage(content=text, name="writer")],
        started_at=at,
        state_delta=[{"op": "add", "path": "/last", "value": text}],
    )
    conversation.extend(result.output)
    return [question, *result.output], ResultRecord(result, len(result.history))


async def commit_exchange(store: ThreadStore, thread_id: str, revision: int, text: str) -> int:
    messages, record = exchange([], text)
    return await store.append_results(
        thread_id, Commit(revision=revision, messages=messages, results=[record])
    )


# -- create / get / list / delete -----------------------------------------------------------------


async def test_create_then_get_an_empty_thread(store: ThreadStore) -> None:
    info = await store.create_thread("t1", app_name="app", user_id="alice", metadata={"k": 1})
    thread = await store.get_thread("t1")

    assert (info.thread_id, info.app_name, info.user_id, info.revision) == ("t1", "app", "alice", 0)
    assert thread is not None
    assert (thread.revision, thread.messages, thread.results, thread.state) == (0, [], [], {})
    assert thread.metadata == {"k": 1}
    assert thread.created_at == thread.updated_at > 0


async def test_a_missing_thread_reads_as_none(store: ThreadStore) -> None:
    assert await store.get_thread("nope") is None
    assert await store.get_results("nope") is None
    assert await store.delete_thread("nope") is False


async def test_a_duplicate_thread_id_is_an_error(store: ThreadStore) -> None:
    await store.create_thread("t1", app_name="app", user_id="alice")
    with pytest.raises(ThreadExistsError, match="t1"):
        await store.create_thread("t1", app_name="other", user_id="bob")
    thread = await store.get_thread("t1")
    assert thread is not None and (thread.app_name, thread.user_id) == ("app", "alice")


@pytest.mark.parametrize(
    ("metadata", "named"),
    [
        ({"owner": object()}, "metadata 'owner'"),
        ({"score": float("nan")}, "metadata 'score'"),
        ({"note": ["ok", "\ud800"]}, "metadata 'note'"),
        ({1: "x"}, "metadata names"),
        (["owner"], "metadata must be a mapping"),
    ],
)
async def test_metadata_every_store_cannot_keep_is_refused_by_name(
    store: ThreadStore, metadata: Any, named: str
) -> None:
    # the memory store kept `object()` and NaN, SQL raised json's TypeError: the same
    # refusal everywhere now, before anything is created
    from network.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=named):
        await store.create_thread("t1", app_name="app", metadata=metadata)
    assert await store.get_thread("t1") is None


async def test_list_threads_by_app_and_user_most_recent_first(store: ThreadStore) -> None:
    await store.create_thread("a1", app_name="app", user_id="alice")
    await store.create_thread("b1", app_name="app", user_id="bob")
    await store.create_thread("a2", app_name="app", user_id="alice")
    await store.create_thread("x1", app_name="other", user_id="alice")
    await anyio.sleep(0.01)
    await commit_exchange(store, "a1", 0, "hello")  # a1 becomes the most recently updated

    assert [t.thread_id for t in await store.list_threads(app_name="app", user_id="alice")] == [
        "a1",
        "a2",
    ]
    assert {t.thread_id for t in await store.list_threads(app_name="app")} == {"a1", "a2", "b1"}
    assert {t.thread_id for t in await store.list_threads(user_id="alice")} == {"a1", "a2", "x1"}
    assert len(await store.list_threads()) == 4


async def test_delete_removes_the_thread_but_not_shared_state(store: ThreadStore) -> None:
    await store.create_thread("t1", app_name="app", user_id="alice")
    await store.create_thread("t2", app_name="app", user_id="alice")
    messages, record = exchange([], "hi")
    commit = Commit(
        revision=0,
        messages=messages,
        results=[record],
        state={"topic": encode_value("x")},
        shared=[shared("user:name", "Alice"), shared("app:motd", "hello")],
    )
    await store.append_results("t1", commit)

    assert await store.delete_thread("t1") is True
    assert await store.get_thread("t1") is None
    assert [t.thread_id for t in await store.list_threads()] == ["t2"]
    other = await store.get_thread("t2")
    assert other is not None
    assert other.user_state == {"user:name": "Alice"} and other.app_state == {"app:motd": "hello"}
    # The id is free again, and the new thread starts empty.
    await store.create_thread("t1", app_name="app", user_id="alice")
    fresh = await store.get_thread("t1")
    assert fresh is not None and (fresh.messages, fresh.results, fresh.state) == ([], [], {})


# -- commits, revisions, times --------------------------------------------------------------------


async def test_history_and_state_round_trip(store: ThreadStore) -> None:
    await store.create_thread("t1", app_name="app")
    conversation: list[Any] = []
    revision = 0
    records = []
    for n in range(3):
        messages, record = exchange(conversation, f"answer {n}", at=1000.0 + n)
        records.append(record)
        commit = Commit(
            revision=revision,
            run_id="run_1",
            messages=messages,
            results=[record],
            state={"count": encode_value(n), "nested": encode_value({"a": [n, None, "s"]})},
        )
        revision = await store.append_results("t1", commit)

    thread = await store.get_thread("t1")
    assert thread is not None
    assert thread.revision == revision == 3
    assert (thread.message_count, thread.result_count) == (6, 3)
    assert [m.to_dict() for m in thread.messages] == [m.to_dict() for m in conversation]
    assert [r.to_dict(mode="json") for r in thread.results] == [
        r.result.to_dict(mode="json") for r in records
    ]
    assert isinstance(thread.results[2].history, HistoryView)  # rebuilt, not stored per result
    assert len(thread.results[2].history) == 5
    assert thread.state == {"count": 2, "nested": {"a": [2, None, "s"]}}


async def test_removed_keys_are_deleted(store: ThreadStore) -> None:
    await store.create_thread("t1", app_name="app")
    state = {"a": encode_value(1), "b": encode_value(2)}
    revision = await store.append_results("t1", Commit(revision=0, state=state))
    await store.append_results("t1", Commit(revision=revision, removed=["a"]))
    thread = await store.get_thread("t1")
    assert thread is not None and thread.state == {"b": 2}


async def test_a_commit_on_an_old_revision_is_stale_and_writes_nothing(
    store: ThreadStore,
) -> None:
    await store.create_thread("t1", app_name="app")
    assert await commit_exchange(store, "t1", 0, "first") == 1
    with pytest.raises(StaleThreadError) as caught:
        await commit_exchange(store, "t1", 0, "second")
    assert (caught.value.thread_id, caught.value.expected, caught.value.found) == ("t1", 0, 1)
    thread = await store.get_thread("t1")
    assert thread is not None and thread.revision == 1
    assert [r.text for r in thread.results] == ["first"]


async def test_a_commit_to_a_missing_thread_is_an_error(store: ThreadStore) -> None:
    with pytest.raises(ThreadNotFoundError):
        await commit_exchange(store, "ghost", 0, "hello")


async def test_the_last_update_time_moves_with_each_commit(store: ThreadStore) -> None:
    created = await store.create_thread("t1", app_name="app")
    await anyio.sleep(0.01)
    await commit_exchange(store, "t1", 0, "hi")
    thread = await store.get_thread("t1")
    assert thread is not None
    assert thread.created_at == created.created_at
    assert thread.updated_at > created.updated_at


async def test_reading_only_recent_results_or_those_after_a_time(store: ThreadStore) -> None:
    await store.create_thread("t1", app_name="app")
    conversation: list[Any] = []
    revision = 0
    for n in range(5):
        messages, record = exchange(conversation, f"r{n}", at=1000.0 + n)
        revision = await store.append_results(
            "t1", Commit(revision=revision, messages=messages, results=[record])
        )

    last_two = await store.get_results("t1", last=2)
    after = await store.get_results("t1", after=1002.0)
    both = await store.get_results("t1", last=1, after=1000.0)
    everything = await store.get_results("t1")

    assert last_two is not None and [r.text for r in last_two] == ["r3", "r4"]
    assert after is not None and [r.text for r in after] == ["r3", "r4"]
    assert both is not None and [r.text for r in both] == ["r4"]
    assert everything is not None and [r.text for r in everything] == [f"r{n}" for n in range(5)]
    assert await store.get_results("t1", last=0) == []
    # Each result's history is rebuilt: the conversation up to that call.
    assert [m.to_dict() for m in last_two[1].history] == [m.to_dict() for m in conversation[:9]]


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("last", -1),  # was []
        ("last", 2.5),  # was a TypeError from slicing
        ("last", "3"),  # was a TypeError from a comparison
        ("last", True),  # was read as last=1
        ("last", float("nan")),  # was []
        ("after", "x"),  # was a TypeError from a comparison
        ("after", float("nan")),  # was [], as if no call were stored
        ("after", False),
    ],
)
async def test_a_bad_window_of_results_names_the_option(
    store: ThreadStore, option: str, value: Any
) -> None:
    from network.errors import ConfigurationError

    await store.create_thread("t1", app_name="app")
    await commit_exchange(store, "t1", 0, "r0")
    with pytest.raises(ConfigurationError, match=f"get_results: {option} must be"):
        await store.get_results("t1", **{option: value})
    with pytest.raises(ConfigurationError, match=f"get_results: {option}"):
        await store.get_results("no-such-thread", **{option: value})  # before the store is read


async def test_delete_user_state_deletes_one_users_keys_in_one_app_or_all(
    store: ThreadStore,
) -> None:
    from network.errors import InvalidIdError
    from network.threads import UserStateStore

    assert isinstance(store, UserStateStore)
    for thread_id, app, user in [
        ("a1", "app", "ann"),
        ("a2", "other", "ann"),
        ("b1", "app", "bob"),
    ]:
        await store.create_thread(thread_id, app_name=app, user_id=user)
        writes = [shared("user:name", user), shared("user:city", "Porto"), shared("app:motd", app)]
        await store.append_results(thread_id, Commit(revision=0, shared=writes))

    with pytest.raises(InvalidIdError):
        await store.delete_user_state("a\x00")
    assert await store.delete_user_state("ann", app_name="app") == 2
    assert await store.delete_user_state("ann", app_name="app") == 0
    a1, a2, b1 = [await store.get_thread(t) for t in ("a1", "a2", "b1")]
    assert a1 is not None and a2 is not None and b1 is not None
    assert a1.user_state == {} and a1.app_state == {"app:motd": "app"}  # app state stays
    assert a2.user_state == {"user:name": "ann", "user:city": "Porto"}  # another app's stays
    assert b1.user_state == {"user:name": "bob", "user:city": "Porto"}  # another user's stays
    assert await store.delete_user_state("ann") == 2  # every app
    a2 = await store.get_thread("a2")
    assert a2 is not None and a2.user_state == {} and a2.revision == 1  # the thread stays


# -- scopes -------------------------------------------------------------------------------------


async def test_scope_visibility_across_users_and_threads(store: ThreadStore) -> None:
    for thread_id, user in [("a1", "alice"), ("a2", "alice"), ("b1", "bob")]:
        await store.create_thread(thread_id, app_name="app", user_id=user)
    await store.create_thread("o1", app_name="other", user_id="alice")
    commit = Commit(
        revision=0,
        state={"topic": encode_value("weather")},
        shared=[shared("user:name", "Alice"), shared("app:motd", "hello")],
    )
    await store.append_results("a1", commit)

    threads = {t: await store.get_thread(t) for t in ["a1", "a2", "b1", "o1"]}
    a1, a2, b1, o1 = (threads[t] for t in ["a1", "a2", "b1", "o1"])
    assert a1 is not None and a2 is not None and b1 is not None and o1 is not None
    assert a1.state == {"topic": "weather"} and a2.state == {} and b1.state == {}
    assert a1.user_state == a2.user_state == {"user:name": "Alice"}  # same user, same app
    assert b1.user_state == {} and o1.user_state == {}  # another user; another app
    assert a1.app_state == a2.app_state == b1.app_state == {"app:motd": "hello"}
    assert o1.app_state == {}
    assert a2.full_state() == {"user:name": "Alice", "app:motd": "hello"}


async def test_shared_writes_merge_with_the_stored_value(store: ThreadStore) -> None:
    await store.create_thread("a1", app_name="app", user_id="alice")
    await store.create_thread("a2", app_name="app", user_id="alice")

    def add(current: Any, new: Any) -> Any:
        return (current or 0) + new

    # Both commits were built from a state where the list and the counter were empty.
    first = [shared("user:log", ["from a1"], merge_lists), shared("app:count", 1, add)]
    second = [shared("user:log", ["from a2"], merge_lists), shared("app:count", 1, add)]
    await store.append_results("a1", Commit(revision=0, shared=first))
    await store.append_results("a2", Commit(revision=0, shared=second))
    await store.append_results("a2", Commit(revision=1, shared=[shared("user:gone", 1)]))
    await store.append_results("a2", Commit(revision=2, shared=[shared("user:gone", DELETED)]))

    thread = await store.get_thread("a1")
    assert thread is not None
    assert thread.user_state == {"user:log": ["from a1", "from a2"]}
    assert thread.app_state == {"app:count": 2}


# -- failure ------------------------------------------------------------------------------------


async def test_a_failed_commit_rolls_back_entirely_and_the_store_keeps_working(
    store: ThreadStore,
) -> None:
    await store.create_thread("t1", app_name="app", user_id="alice")

    def explode(current: Any, new: Any) -> Any:
        raise RuntimeError("handler failed inside the transaction")

    messages, record = exchange([], "doomed")
    doomed = Commit(
        revision=0,
        messages=messages,
        results=[record],
        state={"topic": encode_value("doomed")},
        removed=["nothing"],
        shared=[shared("user:ok", "written first"), shared("user:zz", 1, explode)],
    )
    with pytest.raises(RuntimeError, match="inside the transaction"):
        await store.append_results("t1", doomed)

    thread = await store.get_thread("t1")
    assert thread is not None
    assert (thread.revision, thread.messages, thread.results) == (0, [], [])
    assert (thread.state, thread.user_state) == ({}, {})

    assert await commit_exchange(store, "t1", 0, "fine") == 1
    thread = await store.get_thread("t1")
    assert thread is not None and [r.text for r in thread.results] == ["fine"]
