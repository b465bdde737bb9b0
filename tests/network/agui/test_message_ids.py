"""Message ids on a thread store: an AG-UI client sends its whole conversation every time, and
the server adds only what the thread does not hold. A user message whose id the thread holds
for another message is refused (422 `message_id_reused`), not dropped; a stored message
without an id is known by the id its snapshot gave it, so the client's copy adds nothing twice.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel
from network import Network, ThreadRef
from network.agui import app
from network.threads import MemoryStore, SQLStore
from tests.network.agui.protocol import parse_sse

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        opened: Any = MemoryStore()
    elif request.param == "sqlite":
        opened = SQLStore(str(tmp_path / "threads.db"))
    else:
        opened = SQLStore(request.getfixturevalue("postgres_url"))
    yield opened
    await opened.close()


def heard(request: Any) -> str:
    return "heard " + " | ".join(m.content for m in request.history if m.role == "user")


def notes(asked: list[Any]) -> Network:
    def answer(request: Any) -> str:
        asked.append(request)
        return heard(request)

    return Network("notes", agents=[Agent("scribe", model=ScriptedModel(answer))])


async def post(asgi: Any, thread: str, run: str, messages: list[Any]) -> httpx.Response:
    transport = httpx.ASGITransport(app=asgi)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        body = {"threadId": thread, "runId": run, "messages": messages}
        return await client.post("/", json=body)


def user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": text}


def conversation(thread: Any) -> list[tuple[str, str | None]]:
    return [(m.role, m.content) for m in thread.messages]


async def test_a_resent_id_with_new_text_is_refused_naming_it(store: Any) -> None:
    asked: list[Any] = []
    asgi = app(notes(asked), store=store)
    first = await post(asgi, "t-ids", "r1", [user("m1", "hello")])
    assert first.status_code == 200, first.text
    before = await store.get_thread("t-ids")

    again = await post(asgi, "t-ids", "r2", [user("m1", "something new")])

    # before: 200, the new text dropped and the agent run again on the old conversation
    assert again.status_code == 422, again.text
    error = again.json()["error"]
    assert error["code"] == "message_id_reused" and "'m1'" in error["message"]
    after = await store.get_thread("t-ids")
    assert after.revision == before.revision and len(asked) == 1
    assert conversation(after) == [("user", "hello"), ("assistant", "heard hello")]

    # the client's copy of the conversation, as it was, with a new message, runs as ever
    copy = [user("m1", "hello"), {"id": "x", "role": "assistant", "content": "heard hello"}]
    third = await post(asgi, "t-ids", "r3", [*copy, user("m2", "more")])
    assert third.status_code == 200, third.text
    assert asked[-1].history[-1].content == "more"


async def test_an_id_the_thread_holds_for_an_answer_is_no_user_message(store: Any) -> None:
    asgi = app(notes([]), store=store)
    first = await post(asgi, "t-ids", "r1", [user("m1", "hello")])
    snapshot = next(
        e
        for e in parse_sse((await post(asgi, "t-ids", "r2", [])).text)
        if e["type"] == "MESSAGES_SNAPSHOT"
    )
    assert first.status_code == 200
    answer_id = snapshot["messages"][1]["id"]
    refused = await post(asgi, "t-ids", "r3", [user(answer_id, "heard hello")])
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "message_id_reused"


async def test_one_id_twice_in_a_new_threads_request_creates_nothing(store: Any) -> None:
    asked: list[Any] = []
    asgi = app(notes(asked), store=store)
    refused = await post(asgi, "t-new", "r1", [user("m1", "one"), user("m1", "two")])
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "message_id_reused"
    assert await store.get_thread("t-new") is None and asked == []


async def test_the_clients_copy_of_a_thread_begun_in_python_adds_nothing_twice(
    store: Any,
) -> None:
    asked: list[Any] = []
    network = notes(asked)
    await network.run("hello", thread=ThreadRef("t-py", store=store))  # stored without an id
    asgi = app(network, store=store)
    events = parse_sse((await post(asgi, "t-py", "r1", [])).text)
    (snapshot,) = [e["messages"] for e in events if e["type"] == "MESSAGES_SNAPSHOT"]

    answered = await post(asgi, "t-py", "r2", [*snapshot, user("u2", "second")])

    # before: the first message came back as a new one ("msg_0"), stored and sent twice
    assert answered.status_code == 200, answered.text
    assert [m.content for m in asked[-1].history if m.role == "user"] == ["hello", "second"]
    thread = await store.get_thread("t-py")
    assert [text for role, text in conversation(thread) if role == "user"] == ["hello", "second"]
