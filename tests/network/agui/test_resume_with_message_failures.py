"""A request that answers a pending approval and sends a new user message, when what follows
the answer fails: the tool raises, the step that takes up the answer raises (a capability's
`wrap_resume`, as a remote agent that errs), the model asked next fails, the router fails.
The user's message is the thread's all the same, after the call's result (or a result saying
the call did not finish), and the thread's next turn is a conversation the providers take:
each call's result right after it (`network.serving.held_messages`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel, call, tool
from network import Capability, Network
from network.agui import app
from network.history.results import InferenceResult
from network.run.interrupts import Answer, Interrupt
from network.threads import SQLStore
from tests.network.agui.protocol import events

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

FAILURES = ["tool", "resume", "model", "router"]


class FailingResume(Capability):
    """Takes up the answers by failing (a remote agent that errs)."""

    async def wrap_resume(
        self,
        run: Any,
        answered: list[tuple[Interrupt, Answer]],
        proceed: Callable[[list[tuple[Interrupt, Answer]]], Awaitable[InferenceResult]],
    ) -> InferenceResult:
        raise RuntimeError("the remote agent failed")


def kitchen(failure: str, answered: list[bool]) -> tuple[Network, ScriptedModel]:
    """A chef whose `save_recipe` waits for approval; once `answered` holds True, the part
    named by `failure` fails."""

    @tool(requires_confirmation=True)
    def save_recipe(title: str) -> str:
        """Save a recipe."""
        if failure == "tool":
            raise OSError("the disk is full")
        return f"saved {title}"

    def script(request: Any) -> Any:
        last = request.history[-1]
        if failure == "model" and answered and len(answered) == 1:
            raise RuntimeError("the model is down")
        if last.role == "tool":
            return f"done: {last.content}"
        if last.content == "pancakes":
            return call("save_recipe", title="Pancakes")
        return f"noted: {last.content}"

    model = ScriptedModel(script)
    capabilities = [FailingResume()] if failure == "resume" else []
    chef = Agent("chef", model=model, tools=[save_recipe], capabilities=capabilities)

    def route(ctx: Any) -> Any:
        last = ctx.last_result
        if failure == "router" and len(answered) == 1 and last is not None:
            raise RuntimeError("the router is broken")
        return chef if last is None or last.tool_calls else None

    return Network("kitchen", agents=[chef], router=route), model


def shape(messages: Any) -> list[tuple[str, Any]]:
    """Each message as (role, the call ids or the text); a tool result as its call's id and
    the start of its text."""
    out: list[tuple[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            out.append(("tool", (message.tool_call_id, str(message.content).split(":")[0])))
        elif message.role == "assistant" and message.tool_calls:
            out.append(("call", tuple(c.id for c in message.tool_calls)))
        else:
            out.append((message.role, message.content))
    return out


@pytest.mark.parametrize("failure", FAILURES)
async def test_the_message_sent_with_an_answer_is_kept_whatever_fails(
    tmp_path: Path, failure: str
) -> None:
    answered: list[bool] = []
    network, model = kitchen(failure, answered)
    store = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}")
    transport = httpx.ASGITransport(app=app(network, store=store))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=30) as http:
            asked = {"id": "u1", "role": "user", "content": "pancakes"}
            first = events(
                await http.post("/", json={"threadId": "t", "runId": "r1", "messages": [asked]})
            )
            (finished,) = [e for e in first if e["type"] == "RUN_FINISHED"]
            (interrupt,) = finished["outcome"]["interrupts"]
            syrup = {"id": "u2", "role": "user", "content": "also add syrup"}
            answer = {"interruptId": interrupt["id"], "status": "resolved", "payload": True}
            answered.append(True)
            body = {"threadId": "t", "runId": "r2", "messages": [syrup], "resume": [answer]}
            second = events(await http.post("/", json=body))
            failed = [e for e in second if e["type"] == "RUN_ERROR"]
            assert bool(failed) == (failure != "tool")
            thread = await store.get_thread("t")
            assert thread is not None
            call_id = interrupt["toolCallId"]
            result = {"tool": "Error", "resume": "No result"}.get(failure, "saved Pancakes")
            kept = [
                ("user", "pancakes"),
                ("call", (call_id,)),
                ("tool", (call_id, result)),
                ("user", "also add syrup"),
            ]
            assert shape(thread.messages)[:4] == kept
            # the next turn: the model reads the call, its result, the message, then the rest
            answered.append(True)
            thanks = {"id": "u3", "role": "user", "content": "thanks"}
            body = {"threadId": "t", "runId": "r3", "messages": [thanks]}
            third = events(await http.post("/", json=body))
            assert not [e for e in third if e["type"] == "RUN_ERROR"]
    finally:
        await store.close()
    history = shape(model.requests[-1].history)
    assert history[:4] == kept
    assert history[-1] == ("user", "thanks")
