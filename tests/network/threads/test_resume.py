"""A run that stopped on a confirmation resumes on its thread, and the outcome is saved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, StopReason, ThreadRef
from network.threads import SQLStore

pytestmark = pytest.mark.anyio


def booking_network(calls: list[str]) -> Network:
    @tool(requires_confirmation=True)
    def book(seat: str, ctx: ToolContext) -> str:
        calls.append(seat)
        ctx.kv.set("seat", seat)
        return f"booked {seat}"

    def script(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "tool":
            return f"Done: {last.content}"
        return call("book", seat="12A")

    agent = Agent("agent", tools=[book], model=ScriptedModel(script))

    def router(ctx: Any) -> Any:
        last = ctx.last_result
        return agent if last is None or last.tool_calls else None

    return Network("booking", agents=[agent], router=router)


@pytest.mark.parametrize("accept", [True, False])
async def test_resuming_a_thread_run_commits_the_outcome(tmp_path: Path, accept: bool) -> None:
    calls: list[str] = []
    network = booking_network(calls)
    url = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    first = await network.run(
        "Book me a seat", thread=ThreadRef("trip", store=url), state={"seat": "-"}
    )
    assert first.stop_reason == StopReason.INTERRUPTED and first.persisted
    (pending,) = first.interrupts
    answer = pending.accept() if accept else pending.reject("not that one")
    resumed = await network.run(
        first.resume([answer]), thread=ThreadRef(first.thread_id, store=url)
    )

    assert calls == (["12A"] if accept else [])
    async with SQLStore(url) as store:
        thread = await store.get_thread("trip")
    assert thread is not None
    assert thread.state["seat"] == ("12A" if accept else "-")
    assert thread.revision > 1  # the resumed run committed on top of the interrupted one
    stored_tools = [m for m in thread.messages if m.role == "tool"]
    assert stored_tools[-1].content.startswith("booked" if accept else "Rejected")
    assert resumed.output.startswith("Done:")
