"""A served AG-UI run on a new thread of a store: the lease's claim creates the thread holding
the user's message (`ServedThreads.admit(messages=)`, `network.threads.sql_new_thread`), so a
run costs three transactions (that claim, the agent call's commit, the release); a request
refused after the claim leaves no thread, no message and no lease; the input stays when the
run then fails."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from sqlalchemy import func, select

from agents import Agent, ScriptedModel
from network import Network
from network.agui import app
from network.threads import SQLStore
from network.threads.store_leases import run_leases
from tests.network.agui.http_client import Client, bearer, say
from tests.network.agui.networks import notes_network
from tests.network.serving.test_threads import transactions

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

# Thread ids of these tests' own ("nt-"), and every lease taken by hand released: the run
# leases' table is not emptied between tests on the suite's PostgreSQL server.


async def rows(store: Any) -> dict[str, int]:
    """How many rows the thread tables hold (nothing but the thread's row counted in `threads`)."""
    if not isinstance(store, SQLStore):
        return {}
    counts: dict[str, int] = {}
    async with store.engine.connect() as conn:
        for table in (store.tables.threads, store.tables.messages, store.tables.timeline.commits):
            counts[table.name] = (
                await conn.execute(select(func.count()).select_from(table))
            ).scalar_one()
    return counts


async def test_a_run_on_a_new_thread_is_three_transactions(make_store: Any) -> None:
    store = make_store()
    if not isinstance(store, SQLStore):
        pytest.skip("counts the SQL store's statements")
    # no app: key written (its merge takes SQLAlchemy's path, which the listeners do not see)
    plain = Network("notes", agents=[Agent("scribe", model=ScriptedModel(lambda r: "noted"))])
    served = Client(app(plain, store=store))
    await served.run(say("nt-warm", "r0", "hello"))  # tables made, connections opened
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    await served.run(say("nt-new", "r1", "hello"))
    # the claim creating the thread holding the message; the agent call; the release
    assert transactions(seen) == 3
    thread = await make_store().get_thread("nt-new")
    assert [m.role for m in thread.messages] == ["user", "assistant"]
    assert thread.messages[0].content == "hello" and thread.revision == 2
    # the thread's next turn: its message kept at admission, as before (4)
    seen.clear()
    await served.run(
        {
            **say("nt-new", "r2", "again"),
            "messages": [
                *say("nt-new", "r1", "hello")["messages"],
                {
                    "id": thread.messages[1].id,
                    "role": "assistant",
                    "content": thread.messages[1].content,
                },
                *say("nt-new", "r2", "again")["messages"],
            ],
        }
    )
    assert transactions(seen) == 4
    thread = await make_store().get_thread("nt-new")
    assert [m.content for m in thread.messages if m.role == "user"] == ["hello", "again"]


async def test_a_request_refused_after_the_claim_leaves_nothing(make_store: Any) -> None:
    store = make_store()
    served = Client(app(notes_network(), store=store, max_thread_bytes=200))
    await served.run(say("nt-warm", "r0", "hello"))
    before = await rows(store)
    seen: list[str] = []
    if isinstance(store, SQLStore):
        store.statement_listeners.append(seen.append)
    refusals = [
        (say("nt-s", "r1", "hi", state={"topic": 42}), 422),  # invalid state, by the schema
        (say("nt-s", "r2", "hi", state={"topic": "x" * 500}), 413),  # too large
        (say("nt-s", "r3", "hi", state={"app:last_answer": "mine"}), 403),  # not writable
        (
            say(
                "nt-s",
                "r4",
                "hi",
                tools=[{"name": "bad name!", "description": "", "parameters": {}}],
            ),
            422,
        ),
    ]
    for payload, status in refusals:
        refused = await served.post(payload)
        assert refused.status_code == status, refused.text
        assert await store.get_thread("nt-s") is None
        assert await make_store().get_thread("nt-s") is None
    assert await rows(store) == before  # no thread row, no message, no checkpoint left
    if isinstance(store, SQLStore):  # each was created by its claim, then removed
        head = "INSERT INTO agent_network_threads ("
        created = [sql for sql in seen if head in sql.replace('"', "")]
        assert len(created) == len(refusals)
    # the lease was released each time: the thread's first good request runs
    await served.run(say("nt-s", "r5", "at last"))
    thread = await store.get_thread("nt-s")
    assert [m.content for m in thread.messages if m.role == "user"] == ["at last"]
    other = run_leases(make_store())
    assert await other.claim("nt-s", "another-process", 30)
    await other.release("nt-s", "another-process")


async def test_a_new_thread_whose_lease_is_held_is_busy_and_not_created(make_store: Any) -> None:
    store = make_store()
    served = Client(app(notes_network(), store=store))
    await served.run(say("nt-warm", "r0", "hello"))
    before = await rows(store)
    leases = run_leases(make_store())
    assert await leases.claim("nt-n", "run-in-another-process", 30)
    busy = await served.post(say("nt-n", "r1", "hi"))
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "thread_busy"
    assert await store.get_thread("nt-n") is None
    assert await rows(store) == before
    await leases.release("nt-n", "run-in-another-process")


async def test_another_users_thread_is_not_found_and_left_as_it_was(make_store: Any) -> None:
    store = make_store()
    served = app(notes_network(), store=store, authorize=bearer)
    await Client(served, "token-alice").run(say("nt-a", "r1", "hi"))
    before = await rows(store)
    refused = await Client(served, "token-bob").post(say("nt-a", "r2", "mine now"))
    assert refused.status_code == 404
    thread = await store.get_thread("nt-a")
    assert thread.user_id == "alice" and thread.messages[0].content == "hi"
    assert len(thread.messages) == 2 and await rows(store) == before
    other = run_leases(make_store())
    assert await other.claim("nt-a", "another-process", 30)  # not held
    await other.release("nt-a", "another-process")


async def test_the_input_is_kept_when_the_run_on_a_new_thread_fails(make_store: Any) -> None:
    def broken(request: Any) -> str:
        raise ConnectionError("model down")

    store = make_store()
    network = Network("notes", agents=[Agent("a", model=ScriptedModel(broken))])
    served = Client(app(network, store=store))
    response = await served.post(say("nt-f", "r1", "remember me"))
    assert response.status_code == 200 and "RUN_ERROR" in response.text
    thread = await make_store().get_thread("nt-f")
    assert [m.content for m in thread.messages] == ["remember me"]


async def test_two_requests_on_one_new_thread_run_one_at_a_time(make_store: Any) -> None:
    started, go = anyio.Event(), anyio.Event()

    async def slow(request: Any) -> str:
        started.set()
        await go.wait()
        return "done"

    store = make_store()
    network = Network("notes", agents=[Agent("a", model=ScriptedModel(slow))])
    served = Client(app(network, store=store))
    answers: list[Any] = []

    async def first() -> None:
        answers.append(await served.post(say("nt-c", "r1", "one")))

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        await started.wait()
        second = await served.post(say("nt-c", "r2", "two"))
        go.set()
    assert second.status_code == 409
    assert answers[0].status_code == 200
    thread = await make_store().get_thread("nt-c")
    assert [m.content for m in thread.messages if m.role == "user"] == ["one"]


async def test_a_removal_that_fails_still_releases_the_lease(
    make_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store()
    if not isinstance(store, SQLStore):
        pytest.skip("only the SQL stores' claims create threads")
    asgi = app(notes_network(), store=store)
    leases = asgi.state.stored.creating
    assert leases is not None

    async def broken(*args: Any) -> bool:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(leases, "release_created", broken)
    refused = await Client(asgi).post(say("nt-d", "r1", "hi", state={"topic": 42}))
    assert refused.status_code == 422
    # released on its own: the thread is free; it keeps the user's message (not removed)
    other = run_leases(make_store())
    assert await other.claim("nt-d", "another-process", 30)
    await other.release("nt-d", "another-process")
    thread = await make_store().get_thread("nt-d")
    assert [m.content for m in thread.messages] == ["hi"]
