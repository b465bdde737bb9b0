"""Concurrent runs: no lost update, no interleaved or forked history, on every store.

Each run gets its own store object on the same database, as separate processes would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, StaleThreadError, ThreadRef
from network.threads import ThreadStore

pytestmark = pytest.mark.anyio


class Barrier:
    """Holds every party until `parties` have arrived (all runs have loaded their thread)."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.event = anyio.Event()

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived == self.parties:
            self.event.set()
        with anyio.fail_after(10):
            await self.event.wait()


async def gather(*runs: Callable[[], Any]) -> list[Any]:
    """Run coroutines concurrently; each outcome is its result or the exception it raised."""
    outcomes: list[Any] = [None] * len(runs)

    async def one(index: int) -> None:
        try:
            outcomes[index] = await runs[index]()
        except Exception as error:
            outcomes[index] = error

    async with anyio.create_task_group() as group:
        for index in range(len(runs)):
            group.start_soon(one, index)
    return outcomes


async def test_two_runs_on_one_thread_one_commits_the_other_is_stale(
    open_store: Callable[[], ThreadStore],
) -> None:
    barrier = Barrier(2)

    def network(answer: str) -> Network:
        async def reply(request: Any) -> str:
            await barrier.wait()  # both runs have loaded revision 0 before either commits
            return answer

        return Network("chat", agents=[Agent("a", model=ScriptedModel(reply))])

    first, second = open_store(), open_store()
    await first.create_thread("t1", app_name="chat")
    outcomes = await gather(
        lambda: network("from A").run("question A", thread=ThreadRef("t1", store=first)),
        lambda: network("from B").run("question B", thread=ThreadRef("t1", store=second)),
    )

    errors = [o for o in outcomes if isinstance(o, Exception)]
    winners = [o for o in outcomes if not isinstance(o, Exception)]
    assert len(errors) == 1 and isinstance(errors[0], StaleThreadError), outcomes
    assert (errors[0].expected, errors[0].found) == (0, 1)
    winner = winners[0]
    thread = await open_store().get_thread("t1")
    assert thread is not None and thread.revision == 1
    # Exactly the winner's exchange: the loser's question and answer appear nowhere.
    assert [m.to_dict() for m in thread.messages] == [m.to_dict() for m in winner.messages]
    assert [r.to_dict(mode="json") for r in thread.results] == [
        r.to_dict(mode="json") for r in winner.results
    ]


async def test_a_stale_run_fails_without_touching_the_thread_again(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    agent = Agent("a", model=ScriptedModel(["one"]))
    await Network("chat", agents=[agent]).run("first", thread=ThreadRef("t1", store=store))

    async def sneak_in(request: Any) -> str:
        # Another run commits to the thread while this one is thinking.
        other = Agent("a", model=ScriptedModel(["sneaky"]))
        await Network("chat", agents=[other]).run(
            "meanwhile", thread=ThreadRef("t1", store=open_store())
        )
        return "too late"

    late = Network("chat", agents=[Agent("a", model=ScriptedModel(sneak_in))])
    with pytest.raises(StaleThreadError) as caught:
        await late.run("second", thread=ThreadRef("t1", store=store))
    assert caught.value.partial_result is not None
    thread = await store.get_thread("t1")
    assert thread is not None
    assert [m.content for m in thread.messages] == ["first", "one", "meanwhile", "sneaky"]


def add(current: Any, new: Any) -> int:
    return (current or 0) + new


@pytest.mark.parametrize("runs", [2, 6])
async def test_shared_keys_merge_across_concurrent_runs_of_one_user(
    open_store: Callable[[], ThreadStore], runs: int
) -> None:
    barrier = Barrier(runs)

    @tool
    async def log(entry: str, ctx: ToolContext) -> str:
        """Append to the user's log and count in the app."""
        await barrier.wait()  # every run has loaded the same (empty) user: and app: state
        ctx.kv.set("user:log", [entry])
        ctx.kv.set("app:count", 1, add)
        return "ok"

    def network(entry: str) -> Network:
        agent = Agent("a", tools=[log], model=ScriptedModel([call("log", entry=entry)]))
        return Network("chat", agents=[agent], state_schema={"user:log": {"type": list[str]}})

    def one(n: int) -> Callable[[], Any]:
        store = open_store()
        return lambda: network(f"entry {n}").run(
            "go", thread=ThreadRef(f"t{n}", user_id="alice", store=store)
        )

    outcomes = await gather(*(one(n) for n in range(runs)))

    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    thread = await open_store().get_thread("t0")
    assert thread is not None
    assert sorted(thread.user_state["user:log"]) == [f"entry {n}" for n in range(runs)]
    assert thread.app_state["app:count"] == runs
