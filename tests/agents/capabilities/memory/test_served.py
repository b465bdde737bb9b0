"""Memory over the AG-UI server, two principals on real HTTP: what Alice's runs saved is
recalled in her next thread, never in Bob's, and Bob's tools cannot reach it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel, call
from network import Network
from network.agui import app
from network.history.model_io import ModelRequest
from network.memory import Memories
from network.threads import SQLStore
from tests.network.agui.live import serve
from tests.network.agui.protocol import parse_sse

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


def answer(request: ModelRequest) -> Any:
    """`remember: X` saves X; `recall: Q` searches Q; otherwise the instructions come back,
    so the client reads what was recalled into them."""
    last = request.history[-1]
    if last.role == "tool":
        return f"tool said: {last.content}"
    text = last.content
    if text.startswith("remember: "):
        return call("save_memory", text=text.removeprefix("remember: "))
    if text.startswith("recall: "):
        return call("recall_memories", query=text.removeprefix("recall: "))
    return "instructions: " + request.system[0].content


def network(memories: Memories) -> Network:
    agent = Agent(
        "assistant", system="You are a travel assistant.", model=ScriptedModel(answer),
        memory=memories,
    )  # fmt: skip
    return Network(
        "travel",
        agents=[agent],
        router=lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )


def bearer(request: Any, thread_id: str | None) -> str | None:
    token = request.headers.get("authorization", "").removeprefix("Bearer ")
    return {"token-alice": "alice", "token-bob": "bob"}.get(token)


async def say(base: str, token: str, thread: str, run: str, text: str) -> str:
    payload = {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": f"{run}-u", "role": "user", "content": text}],
    }
    async with httpx.AsyncClient(
        headers={"authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        response = await client.post(base, json=payload, timeout=60)
    assert response.status_code == 200, response.text
    events = parse_sse(response.text)
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


@pytest.mark.parametrize("where", ["store", "in-memory"])
async def test_two_principals_never_share_memories(tmp_path: Path, where: str) -> None:
    """On a thread store (the principal is the thread's user) and on the server's in-memory
    threads (the principal is the thread's owner)."""
    memories = Memories(tmp_path / "memories.db")
    threads = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}")
    stored = {"store": threads} if where == "store" else {}
    served = app(network(memories), authorize=bearer, **stored)
    with serve(served) as base:
        saved = await say(base, "token-alice", "a1", "r1", "remember: Prefers a window seat")
        assert "saved" in saved
        # her next conversation starts knowing it
        hers = await say(base, "token-alice", "a2", "r2", "Book a seat on a plane to Porto")
        assert "- Prefers a window seat" in hers
        # Bob's does not, even asked the same thing, and his recall tool finds nothing
        his = await say(base, "token-bob", "b1", "r3", "Book a seat on a plane to Porto")
        assert his == "instructions: You are a travel assistant."
        searched = await say(base, "token-bob", "b1", "r4", "recall: window seat")
        assert searched == "tool said: []"
        mine = await say(base, "token-alice", "a2", "r5", "recall: window seat")
        assert "Prefers a window seat" in mine
    [item] = await memories.list(("travel", "users", "alice"))
    assert (item.thread_id, item.user_id) == ("a1", "alice")
    assert await memories.namespaces() == [("travel", "users", "alice")]
    await threads.close()
    await memories.close()
