"""A client that goes back in its conversation, on a thread store: the bodies CopilotKit's chat
sends, seen in a browser (its "Regenerate response" button sends the conversation cut after
the user's message; an edit sends it cut before the edited message, then the new text). The
thread follows the client (`network.serving.rewinds`), as the client's copy is followed in
memory: the model answers the conversation the user sees.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel
from network import Network
from network.agui import app
from network.threads import MemoryStore, SQLStore
from tests.network.agui.protocol import parse_sse

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    opened: Any = MemoryStore() if request.param == "memory" else SQLStore(str(tmp_path / "t.db"))
    yield opened
    await opened.close()


class Chat:
    """A chat as CopilotKit's holds it: the whole conversation, sent with every run, the
    answers under the ids their `TEXT_MESSAGE_START` gave them."""

    def __init__(self, asgi: Any, thread: str) -> None:
        self.asgi, self.thread, self.runs = asgi, thread, 0
        self.messages: list[dict[str, Any]] = []

    async def post(
        self, messages: list[dict[str, Any]], state: dict[str, Any] | None = None
    ) -> httpx.Response:
        self.runs += 1
        transport = httpx.ASGITransport(app=self.asgi)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            body = {
                "threadId": self.thread,
                "runId": f"run-{self.runs}",
                "messages": messages,
                "state": state or {},
                "tools": [],
                "context": [],
                "forwardedProps": {},
            }
            return await client.post("/", json=body)

    async def run(self, messages: list[dict[str, Any]]) -> httpx.Response:
        reply = await self.post(messages)
        assert reply.status_code == 200, reply.text
        answer: dict[str, Any] = {}
        for event in parse_sse(reply.text):
            if event["type"] == "TEXT_MESSAGE_START":
                answer = {"id": event["messageId"], "role": "assistant", "content": ""}
            elif event["type"] == "TEXT_MESSAGE_CONTENT":
                answer["content"] += event["delta"]
            elif event["type"] == "RUN_ERROR":
                pytest.fail(str(event))
        self.messages = [*messages, answer]
        return reply

    async def say(self, message_id: str, text: str) -> None:
        await self.run([*self.messages, {"id": message_id, "role": "user", "content": text}])


def echo(asked: list[list[str]]) -> Network:
    def answer(request: Any) -> str:
        said = [m.content for m in request.history]
        asked.append(said)
        return f"answer {len(asked)} to {said[-1]}"

    return Network("chat", agents=[Agent("a", model=ScriptedModel(answer))])


def texts(thread: Any) -> list[str]:
    return [m.content for m in thread.messages]


async def test_regenerate_answers_the_users_message_again_in_place(store: Any) -> None:
    asked: list[list[str]] = []
    chat = Chat(app(echo(asked), store=store), "t-regen")
    await chat.say("6b1e8c50-u1", "first")
    await chat.say("0f7a2d11-u2", "second")
    assert texts(await store.get_thread("t-regen"))[-1] == "answer 2 to second"

    # "Regenerate response" on the last answer: the conversation up to the user's message
    await chat.run(chat.messages[:3])

    # before: the model read its own old answer last ("answer 3 to answer 2 to second") and
    # the thread (and the next snapshot, so the chat) held both answers
    assert asked[-1] == ["first", "answer 1 to first", "second"]
    assert chat.messages[-1]["content"] == "answer 3 to second"
    thread = await store.get_thread("t-regen")
    assert texts(thread) == ["first", "answer 1 to first", "second", "answer 3 to second"]
    # the thread as it was is kept, not lost
    kept = [t for t in await store.list_threads(app_name="chat") if t.thread_id != "t-regen"]
    assert [t.thread_id.startswith("t-regen~rewound-") for t in kept] == [True]

    await chat.say("9c3b7e42-u3", "third")
    assert asked[-1][-3:] == ["second", "answer 3 to second", "third"]
    assert texts(await store.get_thread("t-regen"))[-2:] == ["third", "answer 4 to third"]


async def test_an_edited_message_forks_the_conversation_from_there(store: Any) -> None:
    asked: list[list[str]] = []
    chat = Chat(app(echo(asked), store=store), "t-edit")
    await chat.say("u1", "first")
    await chat.say("u2", "second")
    await chat.say("u3", "third")

    # the second message edited: the chat cut before it, then the new text (a new id)
    await chat.run([*chat.messages[:2], {"id": "u2-edited", "role": "user", "content": "2nd"}])

    # before: the edit was answered after "third" and its answer, the old turns kept
    assert asked[-1] == ["first", "answer 1 to first", "2nd"]
    assert texts(await store.get_thread("t-edit")) == [
        "first",
        "answer 1 to first",
        "2nd",
        "answer 4 to 2nd",
    ]


async def test_an_edited_message_that_keeps_its_id_is_edited_not_refused(store: Any) -> None:
    asked: list[list[str]] = []
    chat = Chat(app(echo(asked), store=store), "t-same")
    await chat.say("u1", "first")
    await chat.say("u2", "second")

    # before: 422 message_id_reused (the thread holds u2 for "second")
    await chat.run([*chat.messages[:2], {"id": "u2", "role": "user", "content": "2nd"}])

    assert asked[-1] == ["first", "answer 1 to first", "2nd"]
    assert texts(await store.get_thread("t-same"))[2:] == ["2nd", "answer 3 to 2nd"]


async def test_a_client_holding_the_whole_thread_or_none_of_it_continues_it(store: Any) -> None:
    asked: list[list[str]] = []
    asgi = app(echo(asked), store=store)
    chat = Chat(asgi, "t-on")
    await chat.say("u1", "first")
    await chat.say("u2", "second")
    # a client that sends only its new message (a runtime restarted: the chat shows nothing)
    fresh = Chat(asgi, "t-on")
    await fresh.say("u3", "third")
    assert asked[-1] == ["first", "answer 1 to first", "second", "answer 2 to second", "third"]
    threads = await store.list_threads(app_name="chat")
    assert [t.thread_id for t in threads] == ["t-on"]


async def test_regenerate_after_a_stopped_run_goes_back_too(store: Any) -> None:
    asked: list[list[str]] = []
    chat = Chat(app(echo(asked), store=store), "t-stop")
    await chat.say("u1", "first")
    # a run stopped in the browser: the chat keeps the tool call it had streamed, which the
    # thread never committed (seen so on SQLite), and the user sends another message
    stopped = {
        "id": "msg_stopped",
        "role": "assistant",
        "toolCalls": [
            {"id": "call_9", "type": "function", "function": {"name": "slow", "arguments": "{}"}}
        ],
    }
    chat.messages = [*chat.messages, {"id": "u2", "role": "user", "content": "slow"}, stopped]
    await chat.say("u3", "after stop")

    await chat.run(chat.messages[:-1])  # "Regenerate response"

    # before: the stopped call stood between the client's copy and the thread: not moved
    # back, the model read its own answer last
    assert asked[-1][-1] == "after stop"
    assert texts(await store.get_thread("t-stop"))[-2:] == ["after stop", "answer 3 to after stop"]


async def test_a_refused_request_that_went_back_leaves_the_thread_as_it_was(store: Any) -> None:
    asked: list[list[str]] = []
    chat = Chat(app(echo(asked), store=store), "t-refused")
    await chat.say("u1", "first")
    await chat.say("u2", "second")
    before = await store.get_thread("t-refused")

    refused = await chat.post(chat.messages[:3], state={"app:motd": "hi"})

    # before: the thread was rewound by the claim, then the request refused
    assert refused.status_code == 403, refused.text
    after = await store.get_thread("t-refused")
    assert texts(after) == texts(before) and after.revision == before.revision
    assert [t.thread_id for t in await store.list_threads(app_name="chat")] == ["t-refused"]
