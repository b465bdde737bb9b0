"""A request that answers a pending approval (`resume`) and also sends a new user message:
the approved call runs once, its result follows its call, then comes the new message, with
no "Not run" result for it; in memory (the client keeps the conversation, with the streamed
result placed after its own message) and on every thread store. A call the request does not
answer is still answered as not run before the new message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel, call, tool
from network import Network
from network.agui import app
from network.threads import MemoryStore
from tests.network.agui.protocol import events, of

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


def kitchen(saved: list[str]) -> tuple[Network, ScriptedModel]:
    """A chef whose `save_recipe` waits for a person's approval (and counts its runs)."""

    @tool(requires_confirmation=True)
    def save_recipe(title: str) -> str:
        """Save a recipe."""
        saved.append(title)
        return f"saved {title}"

    def script(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "tool":
            return f"done: {last.content}"
        if last.content == "pancakes":
            return call("save_recipe", title="Pancakes")
        return f"noted: {last.content}"

    model = ScriptedModel(script)
    chef = Agent("chef", model=model, tools=[save_recipe])

    def route(ctx: Any) -> Any:  # the chef again after its tools ran: it reads the results
        last = ctx.last_result
        return chef if last is None or last.tool_calls else None

    return Network("kitchen", agents=[chef], router=route), model


def order(history: Any) -> list[tuple[str, Any]]:
    """The model request's conversation as (role, the call id or the text)."""
    out: list[tuple[str, Any]] = []
    for message in history:
        if message.role == "tool":
            out.append(("tool", (message.tool_call_id, message.content)))
        elif message.role == "assistant" and message.tool_calls:
            out.append(("call", tuple(c.id for c in message.tool_calls)))
        else:
            out.append((message.role, message.content))
    return out


@pytest.mark.parametrize("approved", [True, False])
async def test_answers_and_a_new_message_resolve_the_calls_first(
    make_app: Callable[[Network], Any], approved: bool
) -> None:
    saved: list[str] = []
    network, model = kitchen(saved)
    transport = httpx.ASGITransport(app=make_app(network))
    async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=30) as http:
        asked = {"id": "u1", "role": "user", "content": "pancakes"}
        opening = {"threadId": "t", "runId": "r1", "messages": [asked]}
        first = events(await http.post("/", json=opening))
        (interrupt,) = of(first, "RUN_FINISHED")[0]["outcome"]["interrupts"]
        (started,) = of(first, "TOOL_CALL_START")
        call_id = started["toolCallId"]
        arguments = "".join(event["delta"] for event in of(first, "TOOL_CALL_ARGS"))
        function = {"name": "save_recipe", "arguments": arguments}
        made = {
            "id": started["parentMessageId"],
            "role": "assistant",
            "toolCalls": [{"id": call_id, "type": "function", "function": function}],
        }
        syrup = {"id": "u2", "role": "user", "content": "also add syrup"}
        answer = {"interruptId": interrupt["id"], "status": "resolved", "payload": approved}
        second = events(
            await http.post(
                "/",
                json={
                    "threadId": "t",
                    "runId": "r2",
                    "messages": [asked, made, syrup],
                    "resume": [answer],
                },
            )
        )
        assert saved == (["Pancakes"] if approved else [])  # exactly once, or never
        (result,) = of(second, "TOOL_CALL_RESULT")
        content = result["content"]
        assert content.startswith("saved" if approved else "Rejected")
        expected = [
            ("user", "pancakes"),
            ("call", (call_id,)),
            ("tool", (call_id, content)),
            ("user", "also add syrup"),
        ]
        assert order(model.requests[-1].history) == expected
        # the next turn, with the conversation as the client holds it: the streamed result
        # after the message it sent with the answer
        (reply,) = of(second, "TEXT_MESSAGE_START")
        text = "".join(e["delta"] for e in of(second, "TEXT_MESSAGE_CONTENT"))
        assert text == "noted: also add syrup"
        held = {"id": result["messageId"], "role": "tool", "toolCallId": call_id}
        held["content"] = content
        answered = {"id": reply["messageId"], "role": "assistant", "content": text}
        thanks = {"id": "u3", "role": "user", "content": "thanks"}
        third = [asked, made, syrup, held, answered, thanks]
        events(await http.post("/", json={"threadId": "t", "runId": "r3", "messages": third}))
    assert saved == (["Pancakes"] if approved else [])
    assert order(model.requests[-1].history) == [
        *expected,
        ("assistant", "noted: also add syrup"),
        ("user", "thanks"),
    ]
    assert all(not str(m.content).startswith("Not run") for m in model.requests[-1].history)


async def test_a_returning_client_keeps_the_message_it_sent_with_its_answer() -> None:
    # a client without the stored conversation gets it back as MESSAGES_SNAPSHOT, which
    # replaces what it holds: the message it sent with the answer is in it, though the run
    # adds it only after the answered call's result
    saved: list[str] = []
    network, _ = kitchen(saved)
    transport = httpx.ASGITransport(app=app(network, store=MemoryStore()))
    async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=30) as http:
        asked = {"id": "u1", "role": "user", "content": "pancakes"}
        opening = {"threadId": "t", "runId": "r1", "messages": [asked]}
        (interrupt,) = of(events(await http.post("/", json=opening)), "RUN_FINISHED")[0]["outcome"][
            "interrupts"
        ]
        syrup = {"id": "u2", "role": "user", "content": "also add syrup"}
        answer = {"interruptId": interrupt["id"], "status": "resolved", "payload": True}
        again = {"threadId": "t", "runId": "r2", "messages": [syrup], "resume": [answer]}
        second = events(await http.post("/", json=again))
    assert saved == ["Pancakes"]
    last = of(second, "MESSAGES_SNAPSHOT")[-1]["messages"]
    assert [(m["role"], m.get("content")) for m in last] == [
        ("user", "pancakes"),
        ("assistant", None),
        ("user", "also add syrup"),
    ]
    assert last[-1]["id"] == "u2"
