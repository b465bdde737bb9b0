"""`history_of(key)` covers the whole thread: the writes of earlier runs come back from the
thread's stored calls, with the agent, tool, source and run that made them, on every store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, ThreadRef
from network.threads import DecodedCache, SQLStore, ThreadStore

pytestmark = pytest.mark.anyio


@tool
def remember(text: str, ctx: ToolContext) -> str:
    """Keep a note, and a scratch value that must never be stored."""
    ctx.kv.set("note", text)
    ctx.kv.set("temp:scratch", text)
    return "kept"


def chat(*texts: str, seen: list[Any] | None = None) -> Network:
    """One agent call per run, asking for `remember`; the router notes what it read."""
    agent = Agent(
        "keeper", tools=[remember], model=ScriptedModel([call("remember", text=t) for t in texts])
    )

    def once(ctx: Any) -> Any:
        if ctx.call_count == 0:
            return agent
        if seen is not None:
            seen.append(ctx.state.history_of("note"))
        return None

    return Network("chat", agents=[agent], router=once)


async def test_history_of_reads_the_writes_of_three_runs(
    open_store: Callable[[], ThreadStore], store_url: str | None
) -> None:
    store = open_store()
    first = await chat("one").run("1", thread=ThreadRef("t", store=store))
    second = await chat("two").run(
        "2", thread=ThreadRef("t", store=store), state={"note": "from caller"}
    )
    seen: list[Any] = []
    # The third run's store starts cold when it is a database: another process, as it were.
    third_store = store if store_url is None else SQLStore(store_url, cache=DecodedCache())
    try:
        third = await chat("three", seen=seen).run("3", thread=ThreadRef("t", store=third_store))
    finally:
        if third_store is not store:
            await third_store.close()

    history = third.state.history_of("note")
    assert [
        (h.writer.source, h.writer.agent, h.writer.tool, h.writer.call_index) for h in history
    ] == [
        ("tool", "keeper", "remember", 0),
        ("caller", None, None, None),
        ("tool", "keeper", "remember", 1),
        ("tool", "keeper", "remember", 2),
    ]
    assert [h.run_id for h in history] == [first.run_id, second.run_id, second.run_id, None]
    assert all(h.op == "set" for h in history)
    assert [h.at for h in history] == sorted(h.at for h in history)
    assert history[0].writer.tool_call_id == first.results[0].tool_calls[0].id
    assert seen == [history]  # the router, in the run, saw the same whole-thread history
    assert third.state.history_of("temp:scratch")[-1].run_id is None  # this run's own only
    assert [h.run_id for h in third.state.history_of("temp:scratch")] == [None]


async def test_history_of_outside_a_thread_is_the_run_alone(store: ThreadStore) -> None:
    await chat("one").run("1", thread=ThreadRef("t", store=store))
    alone = await chat("two").run("2")
    assert [h.writer.call_index for h in alone.state.history_of("note")] == [0]
