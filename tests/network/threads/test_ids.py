"""Identifiers from outside: one set of rules, checked before any store is touched, the same
for memory, SQLite and PostgreSQL; a database error never reaches a caller as driver text."""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from agents import Agent, ScriptedModel
from network import Network, ThreadRef
from network.errors import ConfigurationError, InvalidIdError, ThreadStoreError
from network.threads import BaseStore, Commit, MemoryStore, SQLStore, ThreadInfo, ThreadStore
from network.threads.ids import MAX_ID_LENGTH

pytestmark = pytest.mark.anyio

BAD_IDS = {
    "empty": "",
    "blank": "   ",
    "too long": "t" * (MAX_ID_LENGTH + 1),
    "NUL": "a\x00b",
    "control character": "a\x01b",
    "newline": "a\nb",
    "DEL": "a\x7fb",
    "C1 control": "a\x85b",
    "lone surrogate": "a\ud800b",
    "not a string": 42,
}
GOOD_IDS = ["t" * MAX_ID_LENGTH, "thread with spaces", "üñí-çødé-🧵", "a/b?c=d&e'f\"g;--"]


def bad(label: str) -> Any:
    return BAD_IDS[label]


@pytest.mark.parametrize("label", list(BAD_IDS))
async def test_every_store_refuses_a_bad_thread_id_the_same_way(
    store: ThreadStore, label: str
) -> None:
    thread_id = bad(label)
    calls = [
        store.create_thread(thread_id, app_name="app"),
        store.get_thread(thread_id),
        store.get_results(thread_id),
        store.delete_thread(thread_id),
        store.append_results(thread_id, Commit(revision=0)),
    ]
    for pending in calls:
        with pytest.raises(InvalidIdError) as raised:
            await pending
        assert raised.value.field == "thread_id"
        assert "thread_id" in str(raised.value)
    assert await store.list_threads() == []


@pytest.mark.parametrize("field", ["user_id", "app_name"])
@pytest.mark.parametrize("label", ["blank", "too long", "NUL", "lone surrogate"])
async def test_every_store_refuses_a_bad_user_id_or_app_name(
    store: ThreadStore, field: str, label: str
) -> None:
    names = {"app_name": "app", "user_id": "alice", field: bad(label)}
    with pytest.raises(InvalidIdError) as raised:
        await store.create_thread("t1", **names)
    assert raised.value.field == field
    with pytest.raises(InvalidIdError):
        await store.list_threads(**{field: bad(label)})
    assert await store.list_threads() == []


@pytest.mark.parametrize("thread_id", GOOD_IDS, ids=["longest", "spaces", "unicode", "quotes"])
async def test_every_store_keeps_the_ids_the_rules_allow(
    store: ThreadStore, thread_id: str
) -> None:
    await store.create_thread(thread_id, app_name="app 🧵", user_id="ñ")
    thread = await store.get_thread(thread_id)
    assert thread is not None
    assert (thread.thread_id, thread.app_name, thread.user_id) == (thread_id, "app 🧵", "ñ")


@pytest.mark.parametrize("field", ["thread_id", "user_id", "app_name"])
async def test_a_run_with_a_bad_id_fails_before_the_store_is_touched(
    store: ThreadStore, field: str
) -> None:
    agent = Agent("a", model=ScriptedModel(["never"]))
    ids = {"thread_id": "t1", "user_id": "alice", "app_name": "app", field: "x\x00y"}
    thread = ThreadRef(ids["thread_id"], ids["user_id"], ids["app_name"], store=store)
    with pytest.raises(InvalidIdError) as raised:
        await Network("n", agents=[agent]).run("go", thread=thread)
    assert raised.value.field == field
    assert await store.list_threads() == []
    assert not agent.model.requests  # type: ignore[union-attr]


def test_an_empty_thread_id_is_the_id_rules_error_naming_the_field() -> None:
    """docs/threads.md: a bad id is `InvalidIdError` naming the field; the empty one was a
    bare `ConfigurationError` from `ThreadRef` (a blank one already was the rules' error)."""
    for thread in (ThreadRef(" ").id, ""):
        with pytest.raises(InvalidIdError, match="thread_id must not be empty") as raised:
            Network("n", agents=[Agent("a", model=ScriptedModel(["never"]))]).run_sync(
                "go", thread=ThreadRef(thread, store=MemoryStore())
            )
        assert raised.value.field == "thread_id"
    with pytest.raises(ConfigurationError, match="a thread needs an id, got 7"):
        ThreadRef(7)  # type: ignore[arg-type]


def test_an_empty_app_name_is_refused_when_the_thread_ref_is_made() -> None:
    """ADK's app_name (docs/coming-from-adk.md): `ThreadRef("t", app_name="")` ran as the
    network's app, silently, sharing its `app:` keys; None is the way to say "the default"."""
    with pytest.raises(InvalidIdError, match="app_name must not be empty") as raised:
        ThreadRef("t", app_name="")
    assert raised.value.field == "app_name"
    assert ThreadRef("t", user_id="").user_id == ""  # the anonymous user, as before


async def test_a_run_with_a_bad_run_id_fails_before_its_model_is_called(
    store: ThreadStore,
) -> None:
    """Every commit carries the run id: one a store cannot keep would fail them all after the
    model was paid for (PostgreSQL refuses NUL), so it is refused first."""
    agent = Agent("a", model=ScriptedModel(["never"]))
    with pytest.raises(InvalidIdError) as raised:
        await Network("n", agents=[agent]).run(
            "go", thread=ThreadRef("t1", store=store), run_id="r\x00n"
        )
    assert raised.value.field == "run_id"
    assert not agent.model.requests  # type: ignore[union-attr]
    thread = await store.get_thread("t1")
    assert thread is None or thread.message_count == 0


@pytest.mark.usefixtures("quiet_logs")  # capture_logs leaves structlog configured: reset it
async def test_a_database_error_reaches_the_caller_without_driver_text(
    store: ThreadStore, store_kind: str
) -> None:
    if store_kind == "memory":
        pytest.skip("the memory store has no database")
    assert isinstance(store, SQLStore)
    await store.create_thread("t1", app_name="app")
    async with store.engine.begin() as conn:  # the database breaks under the store
        await conn.exec_driver_sql(f"DROP TABLE {store.tables.threads.name}")
    with capture_logs() as logs, pytest.raises(ThreadStoreError) as raised:
        await store.get_thread("t1")
    message = str(raised.value)
    assert raised.value.operation == "get_thread"
    for driver_text in ("SELECT", store.tables.threads.name, "sqlite3", "asyncpg", "no such"):
        assert driver_text not in message
    assert raised.value.__cause__ is not None  # the driver's error, for the developer
    assert [log["event"] for log in logs] == ["thread_store.failed"]
    assert store.tables.threads.name in logs[0]["error"]  # logged in full
    # kept by the store's `_create_thread` hook (under `BaseStore.create_thread`): a failure
    # still names the method the caller called
    with capture_logs(), pytest.raises(ThreadStoreError) as created:
        await store.create_thread("t2", app_name="app")
    assert created.value.operation == "create_thread"


@pytest.mark.usefixtures("quiet_logs")
async def test_a_failed_commit_is_wrapped_the_same_way(store: ThreadStore, store_kind: str) -> None:
    if store_kind == "memory":
        pytest.skip("the memory store has no database")
    assert isinstance(store, SQLStore)
    await store.create_thread("t1", app_name="app")
    async with store.engine.begin() as conn:
        await conn.exec_driver_sql(f"DROP TABLE {store.tables.messages.name}")
    from network import UserMessage

    with capture_logs(), pytest.raises(ThreadStoreError, match="append_results") as raised:
        await store.append_results("t1", Commit(revision=0, messages=[UserMessage(content="x")]))
    assert "INSERT" not in str(raised.value) and "messages" not in str(raised.value)


async def test_a_base_store_subclass_gets_create_thread_from_its_hook() -> None:
    """`BaseStore.create_thread` checks the ids and makes the header; a store's
    `_create_thread` only keeps it. A bad id reaches no store."""

    class Kept(BaseStore):
        def __init__(self) -> None:
            self.kept: list[ThreadInfo] = []

        async def _create_thread(self, info: ThreadInfo) -> None:
            self.kept.append(info)

    store = Kept()
    info = await store.create_thread("t1", app_name="app", user_id="ann", metadata={"a": 1})
    assert store.kept == [info]
    assert (info.thread_id, info.app_name, info.user_id, info.revision) == ("t1", "app", "ann", 0)
    assert info.metadata == {"a": 1}
    with pytest.raises(InvalidIdError) as raised:
        await store.create_thread("t2", app_name="app", user_id="a\x00b")
    assert raised.value.field == "user_id"
    assert store.kept == [info]
