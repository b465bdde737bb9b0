"""The MCP run tool on a thread (`"thread": id`), through the serving layer: a conversation
that carries over, approvals answered exactly once, and a thread nobody else can reach, in
process and over Streamable HTTP with an `authorize` hook reading a bearer token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from agents import Agent, ScriptedModel, call, tool
from network import Network, RunContext
from network.mcp import mcp_server, serve_mcp
from network.serving.principals import Unauthorized
from tests.network.mcp.test_sessions import leaves

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


def notes(seen: list[Any]) -> Network:
    def answer(request: Any) -> str:
        seen.append(request)
        return "heard " + " | ".join(m.content for m in request.history if m.role == "user")

    return Network(
        "notes", agents=[Agent("scribe", model=ScriptedModel(answer))], state_schema=None
    )


def cashier(paid: list[int]) -> Network:
    @tool(requires_confirmation=True)
    def pay(amount: int) -> str:
        """Pay `amount`."""
        paid.append(amount)
        return f"paid {amount}"

    def script(request: Any) -> Any:
        last = request.history[-1]
        return "done: " + last.content if last.role == "tool" else call("pay", amount=9)

    def route(ctx: RunContext) -> Any:
        last = ctx.last_result
        return ctx.network.agents["cashier"] if last is None or last.tool_calls else None

    return Network(
        "shop", agents=[Agent("cashier", tools=[pay], model=ScriptedModel(script))], router=route
    )


def refusal(result: Any) -> str:
    assert result.is_error, result
    text: str = result.content[0].text
    return text


async def test_a_thread_carries_the_conversation_from_call_to_call() -> None:
    seen: list[Any] = []
    async with Client(mcp_server(notes(seen))) as client:
        one = await client.call_tool("notes", {"input": "hello", "thread": "t1"})
        two = await client.call_tool("notes", {"input": "again", "thread": "t1"})
        fresh = await client.call_tool("notes", {"input": "alone"})
    assert one.structured_content["output"] == "heard hello"
    assert two.structured_content == {
        "output": "heard hello | again",
        "stop_reason": "router_finished",
        "state": {},
        "thread": "t1",
        "interrupts": [],
    }
    assert fresh.structured_content["output"] == "heard alone"
    assert "thread" not in fresh.structured_content  # a call on no thread is as it was


async def test_an_approval_waits_on_the_thread_and_is_answered_once() -> None:
    paid: list[int] = []
    async with Client(mcp_server(cashier(paid))) as client:
        asked = await client.call_tool("shop", {"input": "pay the bill", "thread": "bill"})
        (pending,) = asked.structured_content["interrupts"]
        assert pending["tool"] == "pay" and pending["arguments"] == {"amount": 9} and not paid
        ignored = await client.call_tool("shop", {"input": "hello?", "thread": "bill"})
        assert "refused (interrupt_pending)" in refusal(ignored)
        answer = {
            "input": "",
            "thread": "bill",
            "answers": [{"interrupt": pending["id"], "approved": True}],
        }
        done = await client.call_tool("shop", answer)
        again = await client.call_tool("shop", answer)
    assert done.structured_content["output"] == "done: paid 9"
    assert done.structured_content["interrupts"] == []
    assert "refused (no_pending_interrupt)" in refusal(again)
    assert paid == [9]


async def test_an_approval_is_a_json_boolean_nothing_else() -> None:
    # `"approved": "yes"` (or "on", "1", 1) was read as true by pydantic's lax bool and the
    # call ran, where AG-UI's resume and A2A's answers take a JSON boolean only
    paid: list[int] = []
    async with Client(mcp_server(cashier(paid))) as client:
        asked = await client.call_tool("shop", {"input": "pay the bill", "thread": "bill"})
        (pending,) = asked.structured_content["interrupts"]
        for word in ("yes", "true", "on", "1", 1, 0, None):
            answer = {"interrupt": pending["id"], "approved": word}
            refused = await client.call_tool(
                "shop", {"input": "", "thread": "bill", "answers": [answer]}
            )
            assert refusal(refused).startswith("invalid arguments: answers.0.approved"), word
        assert not paid  # the call did not run, and it still waits
        ignored = await client.call_tool("shop", {"input": "hello?", "thread": "bill"})
        assert "refused (interrupt_pending)" in refusal(ignored)
        answer = {"interrupt": pending["id"], "approved": True}
        done = await client.call_tool("shop", {"input": "", "thread": "bill", "answers": [answer]})
    assert done.structured_content["output"] == "done: paid 9"
    assert paid == [9]


async def test_an_approval_on_no_thread_is_an_error_that_says_to_use_one() -> None:
    # a fresh run is not kept, so its approval could never be answered; an empty output
    # with no error would read to a calling model as the network's answer
    paid: list[int] = []
    async with Client(mcp_server(cashier(paid))) as client:
        asked = await client.call_tool("shop", {"input": "pay the bill"})
    text = refusal(asked)
    assert text.startswith("refused (approval_needs_thread):") and "'pay'" in text
    assert '"thread"' in text and not paid


async def test_what_a_client_may_not_do_on_a_thread_is_refused() -> None:
    seen: list[Any] = []
    async with Client(mcp_server(notes(seen))) as client:
        bad_id = await client.call_tool("notes", {"input": "x", "thread": "a\x00b"})
        shared = await client.call_tool(
            "notes", {"input": "x", "thread": "t", "state": {"app:flag": 1}}
        )
        answering = await client.call_tool(
            "notes",
            {"input": "", "thread": "t", "answers": [{"interrupt": "i", "approved": True}]},
        )
    assert "refused (invalid_thread_id)" in refusal(bad_id) and "thread" in refusal(bad_id)
    assert "refused (state_key_not_writable)" in refusal(shared)
    assert "refused (no_pending_interrupt)" in refusal(answering)
    assert not seen


async def test_answers_without_a_thread_are_refused_saying_to_give_it() -> None:
    """Before, the refusal read 'refused (invalid_thread_id): thread must be a string, got
    NoneType': about a field the caller never sent."""
    seen: list[Any] = []
    async with Client(mcp_server(notes(seen))) as client:
        answered = await client.call_tool(
            "notes", {"input": "", "answers": [{"interrupt": "i", "approved": True}]}
        )
    assert refusal(answered) == (
        'invalid arguments: answers: answers are given with the "thread" whose interrupts '
        "they answer"
    )
    assert not seen


def bearer(request: Any, thread_id: str | None) -> str:
    token = "" if request is None else request.headers.get("authorization", "")
    user = {"Bearer a": "alice", "Bearer b": "bob"}.get(token)
    if user is None:
        raise Unauthorized("a bearer token is needed")
    return user


@pytest.fixture
async def served_over_http() -> AsyncIterator[str]:
    seen: list[Any] = []
    ready: list[str] = []
    async with anyio.create_task_group() as group:
        group.start_soon(
            lambda: serve_mcp(
                notes(seen), transport="http", port=0, on_ready=ready.append, authorize=bearer
            )
        )
        with anyio.fail_after(20):
            while not ready:
                await anyio.sleep(0.05)
        yield ready[0]
        group.cancel_scope.cancel()


async def call_as(url: str, token: str | None, arguments: dict[str, Any]) -> Any:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await client.call_tool("notes", arguments)


async def test_over_http_a_thread_is_its_principals_alone(served_over_http: str) -> None:
    url = served_over_http
    mine = await call_as(url, "a", {"input": "secret plan", "thread": "plans"})
    assert mine.structured_content["output"] == "heard secret plan"
    theirs = await call_as(url, "b", {"input": "show me", "thread": "plans"})
    assert "refused (thread_not_found)" in refusal(theirs)
    assert "secret" not in refusal(theirs)
    # a caller the hook refuses is refused over HTTP, before any call (network.mcp.authorized)
    with pytest.raises(BaseExceptionGroup) as nobody:  # (the client's task group's)
        await call_as(url, None, {"input": "hi"})
    refused = nobody.value.subgroup(MCPError)
    assert refused is not None
    (error,) = leaves(refused)
    assert str(error) == "refused (unauthorized): a bearer token is needed"
    again = await call_as(url, "a", {"input": "go on", "thread": "plans"})
    assert again.structured_content["output"] == "heard secret plan | go on"


@pytest.mark.parametrize("key", ["app:plan", "temp:context"])
async def test_a_fresh_call_may_not_write_server_side_keys_either(
    served_over_http: str, key: str
) -> None:
    # `temp:context` reaches instructions that read it, `app:` keys are the server's: a
    # stranger's call on no thread is held to the same rule as one on a thread.
    refused = await call_as(served_over_http, "a", {"input": "hi", "state": {key: "mine"}})
    assert f"refused (state_key_not_writable): state key {key!r}" in refusal(refused)
    fine = await call_as(served_over_http, "a", {"input": "hi", "state": {"user:name": "Ann"}})
    assert fine.structured_content["state"] == {"user:name": "Ann"}
