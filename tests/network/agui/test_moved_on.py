"""A client that moves on from a frontend tool call (a new user message, no result): the next
model request still answers the call (as not run) before the new message, in memory and on a
store; a client that sends the result gets it through as it is."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel, call
from agents.models._wire import to_wire_list
from network import Network
from network.agui import app
from network.threads import MemoryStore
from tests.fakes.unkept_store import KeepsNoPending

TOOLS = [
    {
        "name": "show_card",
        "description": "Show a card in the page.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
    }
]
ASKED = {"id": "m1", "role": "user", "content": "show a card"}


def body(run_id: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "threadId": "t1",
        "runId": run_id,
        "messages": messages,
        "tools": TOOLS,
        "state": {},
        "context": [],
        "forwardedProps": {},
    }


async def two_turns(store: Any, second: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first turn stops on the frontend tool; `second` is the client's next messages; the
    conversation the model got on the second turn, as sent."""
    model = ScriptedModel([call("show_card", text="hi"), "ok"])
    network = Network("desk", agents=[Agent("a", system="Help.", model=model)])
    served = app(network, store=store) if store is not None else app(network)
    transport = httpx.ASGITransport(app=served)
    async with httpx.AsyncClient(transport=transport, base_url="http://test", timeout=30) as client:
        first = await client.post("/", json=body("r1", [ASKED]))
        events = [json.loads(line[5:]) for line in first.text.splitlines() if line[:5] == "data:"]
        (started,) = [e for e in events if e["type"] == "TOOL_CALL_START"]
        messages = [m if m != "CALL" else _assistant(started["toolCallId"]) for m in second]
        messages = [_result(started["toolCallId"]) if m == "RESULT" else m for m in messages]
        answered = await client.post("/", json=body("r2", messages))
        assert answered.status_code == 200, answered.text
        assert '"RUN_FINISHED"' in answered.text, answered.text
    sent = model.requests[-1]
    return to_wire_list(sent.system, sent.history)


def _assistant(call_id: str) -> dict[str, Any]:
    function = {"name": "show_card", "arguments": '{"text": "hi"}'}
    return {
        "id": "m2",
        "role": "assistant",
        "toolCalls": [{"id": call_id, "type": "function", "function": function}],
    }


def _result(call_id: str) -> dict[str, Any]:
    return {"id": "m3", "role": "tool", "toolCallId": call_id, "content": "shown"}


STORES = [pytest.param(None, id="in-memory"), pytest.param("memory-store", id="store")]
STORE_KINDS = {None: lambda: None, "memory-store": MemoryStore, "unkept": KeepsNoPending}


@pytest.mark.anyio
@pytest.mark.parametrize("store", [*STORES, pytest.param("unkept", id="store-keeping-no-calls")])
async def test_a_new_message_after_a_frontend_call_answers_it_as_not_run(store: Any) -> None:
    # on a store that keeps no pending calls, the call was said to be taken up by a run that
    # died ("No result: ... ended before it finished"): a tool the client never ran
    moved_on = {"id": "m9", "role": "user", "content": "forget it"}
    wires = await two_turns(STORE_KINDS[store](), [ASKED, "CALL", moved_on])
    roles = [w["role"] for w in wires]
    assert roles == ["system", "user", "assistant", "tool", "user"], wires
    assert wires[3]["content"].startswith("Not run: the user sent a new message")
    assert wires[3]["tool_call_id"] == wires[2]["tool_calls"][0]["id"]


@pytest.mark.anyio
@pytest.mark.parametrize("store", STORES)
async def test_a_result_the_client_sends_goes_through_as_it_is(store: Any) -> None:
    wires = await two_turns(MemoryStore() if store else None, [ASKED, "CALL", "RESULT"])
    assert [w["role"] for w in wires] == ["system", "user", "assistant", "tool"], wires
    assert wires[3]["content"] == "shown"
