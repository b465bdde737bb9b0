"""The KV's record of raw `user:` / `app:` writes, which a store re-applies with their handlers."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, State, ThreadRef
from network.state.handlers import merge_lists, replace_values
from network.state.kv import MISSING
from network.threads import MemoryStore

pytestmark = pytest.mark.anyio


def add(current: Any, new: Any) -> int:
    return (current or 0) + new


def test_only_shared_keys_are_recorded_and_only_when_asked() -> None:
    state = State(schema={"user:log": {"type": list[str]}})
    kv = state.kv
    kv.set("user:log", ["off"])
    assert kv.take_shared_writes() == []  # a run without a thread keeps nothing

    kv.record_shared_writes = True
    kv.set("user:log", "one")
    kv.set("app:count", 2, add)
    kv.set("thread_key", 1)
    kv.set("temp:x", 1)
    kv.delete("app:count")
    assert kv.take_shared_writes() == [
        ("user:log", "one", merge_lists),
        ("app:count", 2, add),
        ("app:count", MISSING, replace_values),
    ]
    assert kv.take_shared_writes() == []


def test_a_rolled_back_write_is_not_recorded() -> None:
    kv = State().kv
    kv.record_shared_writes = True
    kv.set("user:a", 1)
    mark = kv.savepoint()
    kv.set("user:b", 2)
    kv.rollback(mark)
    assert kv.take_shared_writes() == [("user:a", 1, replace_values)]


def test_the_recorded_input_is_a_copy() -> None:
    kv = State().kv
    kv.record_shared_writes = True
    value = {"nested": [1]}
    kv.set("user:a", value)
    value["nested"].append(2)
    assert kv.take_shared_writes() == [("user:a", {"nested": [1]}, replace_values)]


async def test_a_failed_tools_shared_writes_never_reach_the_store() -> None:
    @tool
    def fails(ctx: ToolContext) -> str:
        """Write, then fail."""
        ctx.kv.set("user:log", ["from a failed tool"])
        raise RuntimeError("tool failed")

    @tool
    def works(ctx: ToolContext) -> str:
        """Write and succeed."""
        ctx.kv.set("user:log", ["kept"])
        return "ok"

    model = ScriptedModel([[call("fails"), call("works")]])
    agent = Agent("a", tools=[fails, works], model=model)
    store = MemoryStore()
    network = Network("n", agents=[agent], state_schema={"user:log": {"type": list[str]}})
    await network.run("go", thread=ThreadRef("t1", user_id="u", store=store))
    thread = await store.get_thread("t1")
    assert thread is not None and thread.user_state == {"user:log": ["kept"]}
