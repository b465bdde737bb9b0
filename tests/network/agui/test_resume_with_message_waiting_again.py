"""A request that answers a pending approval and sends a new user message, when the answered
call waits again: a sub-agent (an agent used as a tool) that asks for a second approval once
the first is given. The message stays held until that call has its result: the model reads
the call, its result, then the message, and the thread's later turns are a conversation the
providers take (each call's result right after it), in memory and on a stored thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from network import ThreadRef
from network.agui import app
from network.threads import SQLStore
from tests.fakes.unkept_store import KeepsNoPending
from tests.network.agui.networks import pantry_kitchen
from tests.network.agui.protocol import events, of

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


def shape(messages: Any) -> list[tuple[str, Any]]:
    """Each message as (role, the call ids or the text)."""
    out: list[tuple[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            out.append(("tool", message.tool_call_id))
        elif message.role == "assistant" and message.tool_calls:
            out.append(("call", tuple(c.id for c in message.tool_calls)))
        else:
            out.append((message.role, message.content))
    return out


def valid(messages: Any) -> bool:
    """Whether every tool call's result follows it directly (what OpenAI requires)."""
    waiting: set[str] = set()
    for message in messages:
        if message.role == "tool":
            if message.tool_call_id not in waiting:
                return False
            waiting.discard(message.tool_call_id)
            continue
        if waiting:
            return False
        if message.role == "assistant":
            waiting = {c.id for c in message.tool_calls}
    return True


def answer(stream: list[dict[str, Any]]) -> dict[str, Any]:
    (interrupt,) = of(stream, "RUN_FINISHED")[0]["outcome"]["interrupts"]
    return {"interruptId": interrupt["id"], "status": "resolved", "payload": True}


def client_messages(stream: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chef's tool call as an AG-UI client holds it (the sub-agent's events aside)."""
    (started,) = [e for e in of(stream, "TOOL_CALL_START") if "subagentRunId" not in e]
    arguments = "".join(
        e["delta"] for e in of(stream, "TOOL_CALL_ARGS") if e["toolCallId"] == started["toolCallId"]
    )
    function = {"name": started["toolCallName"], "arguments": arguments}
    call_id = started["toolCallId"]
    return [
        {
            "id": started["parentMessageId"],
            "role": "assistant",
            "toolCalls": [{"id": call_id, "type": "function", "function": function}],
        }
    ]


@pytest.mark.parametrize(
    ("kind", "resent"), [("in-memory", True), ("sqlite", True), ("sqlite", False)]
)
async def test_a_message_sent_with_an_answer_waits_while_the_call_waits_again(
    tmp_path: Path, kind: str, resent: bool
) -> None:
    # `resent`: the client sends its whole conversation with each request (AG-UI's
    # HttpAgent), else only what is new (on a store, the thread keeps the rest)
    saved: list[str] = []
    network, model = pantry_kitchen(saved)
    store = None if kind == "in-memory" else SQLStore(f"sqlite+aiosqlite:///{tmp_path / 't.db'}")
    served = app(network) if store is None else app(network, store=store)
    transport = httpx.ASGITransport(app=served)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            asked = {"id": "u1", "role": "user", "content": "pancakes"}
            body = {"threadId": "t", "runId": "r1", "messages": [asked]}
            first = events(await http.post("/", json=body))
            made = client_messages(first)
            call_id = made[0]["toolCalls"][0]["id"]
            syrup = {"id": "u2", "role": "user", "content": "also add syrup"}
            held = [asked, *made, syrup]  # the client's conversation, as AG-UI clients send it
            body = {"threadId": "t", "runId": "r2", "messages": held, "resume": [answer(first)]}
            second = events(await http.post("/", json=body))
            assert of(second, "RUN_FINISHED")[0]["outcome"]["type"] == "interrupt"  # again
            assert saved == []
            if store is not None:  # the thread waits on the call: nothing after it yet
                thread = await store.get_thread("t")
                assert thread is not None
                assert shape(thread.messages) == [("user", "pancakes"), ("call", (call_id,))]
            again = held if resent else []
            body = {"threadId": "t", "runId": "r3", "messages": again, "resume": [answer(second)]}
            third = events(await http.post("/", json=body))
            assert not of(third, "RUN_ERROR")
            assert saved == ["Pancakes"]
            expected = [
                ("user", "pancakes"),
                ("call", (call_id,)),
                ("tool", call_id),
                ("user", "also add syrup"),
            ]
            assert shape(model.requests[-1].history) == expected
            if store is not None:
                thread = await store.get_thread("t")
                assert thread is not None
                assert shape(thread.messages)[:4] == expected
                assert valid(thread.messages)
            # the next turn: the conversation is one the providers take
            (result,) = [e for e in of(third, "TOOL_CALL_RESULT") if "subagentRunId" not in e]
            given = {"id": result["messageId"], "role": "tool", "toolCallId": call_id}
            given["content"] = result["content"]
            thanks = {"id": "u3", "role": "user", "content": "thanks"}
            turn = [*held, given, thanks] if resent else [thanks]
            body = {"threadId": "t", "runId": "r4", "messages": turn}
            assert not of(events(await http.post("/", json=body)), "RUN_ERROR")
    finally:
        if store is not None:
            await store.close()
    history = model.requests[-1].history
    assert shape(history)[:4] == expected and shape(history)[-1] == ("user", "thanks")
    assert valid(history)


async def test_a_new_message_on_the_thread_adds_the_held_one_after_the_calls_results(
    tmp_path: Path,
) -> None:
    # the thread waits again with the message held; a run on the thread moves on instead of
    # answering: the call is answered as not run, then comes the held message, then the new
    saved: list[str] = []
    network, model = pantry_kitchen(saved)
    store = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 't.db'}")
    transport = httpx.ASGITransport(app=app(network, store=store))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            asked = {"id": "u1", "role": "user", "content": "pancakes"}
            body = {"threadId": "t", "runId": "r1", "messages": [asked]}
            first = events(await http.post("/", json=body))
            call_id = client_messages(first)[0]["toolCalls"][0]["id"]
            syrup = {"id": "u2", "role": "user", "content": "also add syrup"}
            body = {"threadId": "t", "runId": "r2", "messages": [syrup], "resume": [answer(first)]}
            events(await http.post("/", json=body))
        await network.run("thanks", thread=ThreadRef("t", store=store))
        thread = await store.get_thread("t")
        assert thread is not None
    finally:
        await store.close()
    assert shape(thread.messages)[:5] == [
        ("user", "pancakes"),
        ("call", (call_id,)),
        ("tool", call_id),
        ("user", "also add syrup"),
        ("user", "thanks"),
    ]
    assert thread.messages[2].content.startswith("Not run")
    assert valid(model.requests[-1].history) and valid(thread.messages)
    assert saved == []


@pytest.mark.parametrize("resent", [False, True])
async def test_a_held_message_survives_on_a_store_that_keeps_no_pending_calls(
    resent: bool,
) -> None:
    # the store keeps neither the approvals nor the messages held with them: the server
    # remembers both, and the answer that lets the call finish adds the message after it
    saved: list[str] = []
    network, model = pantry_kitchen(saved)
    store = KeepsNoPending()
    transport = httpx.ASGITransport(app=app(network, store=store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        asked = {"id": "u1", "role": "user", "content": "pancakes"}
        first = events(
            await http.post("/", json={"threadId": "t", "runId": "r1", "messages": [asked]})
        )
        made = client_messages(first)
        call_id = made[0]["toolCalls"][0]["id"]
        syrup = {"id": "u2", "role": "user", "content": "also add syrup"}
        held = [asked, *made, syrup]
        sent = held if resent else [syrup]
        body = {"threadId": "t", "runId": "r2", "messages": sent, "resume": [answer(first)]}
        second = events(await http.post("/", json=body))
        assert of(second, "RUN_FINISHED")[0]["outcome"]["type"] == "interrupt"  # again
        again = held if resent else []  # a client that sends only what is new sends nothing
        body = {"threadId": "t", "runId": "r3", "messages": again, "resume": [answer(second)]}
        assert not of(events(await http.post("/", json=body)), "RUN_ERROR")
    assert saved == ["Pancakes"]
    expected = [
        ("user", "pancakes"),
        ("call", (call_id,)),
        ("tool", call_id),
        ("user", "also add syrup"),
    ]
    assert shape(model.requests[-1].history) == expected
    thread = await store.get_thread("t")
    assert shape(thread.messages)[:4] == expected and valid(thread.messages)
