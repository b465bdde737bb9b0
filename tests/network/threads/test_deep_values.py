"""One depth limit for state values, checked at `kv.set`, so every stored thread stays readable.

pydantic reads JSON back only to 200 levels, and a thread store keeps a value inside the JSON of
the call that wrote it: a value ~200 levels deep used to be accepted, stored, and then
unreadable by any other process. Values past `MAX_DEPTH` are refused when written, naming the
key; the deepest accepted value reads back in a fresh process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, State, ThreadRef, ToolStateWarning, UnstorableValueError
from network.state.handlers import merge_lists
from network.state.storable import MAX_DEPTH

pytestmark = pytest.mark.anyio


def nested(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = [value]
    return value


class Holder(BaseModel):
    inside: Any = None


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (None, nested(MAX_DEPTH + 1)),
        (None, {"a": nested(MAX_DEPTH)}),
        ({"deep": {"type": Any}}, nested(MAX_DEPTH + 1)),
        ({"deep": {"type": list[Any]}}, nested(MAX_DEPTH + 1)),
        ({"deep": {"type": Holder}}, Holder(inside=nested(MAX_DEPTH))),
        (None, Holder(inside=nested(MAX_DEPTH))),
    ],
    ids=["untyped", "in-a-dict", "typed-any", "list-of-any", "model", "untyped-model"],
)
def test_a_value_past_the_depth_limit_is_refused_naming_the_key(schema: Any, value: Any) -> None:
    state = State({"deep": ["kept"]} if schema is None else None, schema=schema)
    before = state.kv.data
    with pytest.raises(UnstorableValueError, match=rf"'deep'.*more than {MAX_DEPTH} levels") as e:
        state.kv.set("deep", value)
    assert e.value.key == "deep"
    assert state.kv.data == before


def test_the_limit_holds_for_appends_and_stops_a_list_containing_itself() -> None:
    state = State({"deep": []})
    state.kv.set("deep", [nested(MAX_DEPTH - 1)], merge_lists)  # 100 levels: accepted
    with pytest.raises(UnstorableValueError, match="'deep'"):
        state.kv.set("deep", [nested(MAX_DEPTH)], merge_lists)
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(UnstorableValueError, match="'loop'"):
        state.kv.set("loop", loop)


@tool
def store_deep(levels: int, ctx: ToolContext) -> str:
    """Write a value `levels` deep, replacing and appending."""
    ctx.kv.set("deep", nested(levels))
    ctx.kv.set("log", [nested(levels - 1)], merge_lists)
    return "stored"


async def test_the_deepest_accepted_value_reads_back_in_a_fresh_process(tmp_path: Path) -> None:
    """A run writes the deepest value the limit accepts (and has a deeper write refused), then
    another process loads the thread from the SQLite file and decodes every call."""
    database = tmp_path / "threads.db"
    model = ScriptedModel(
        [call("store_deep", levels=MAX_DEPTH), call("store_deep", levels=MAX_DEPTH + 100)]
    )
    agent = Agent("deep", tools=[store_deep], model=model)
    network = Network(
        "deep", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None
    )
    with pytest.warns(ToolStateWarning, match="'deep'"):  # ~200 levels: unreadable before
        result = await network.run("go", thread=ThreadRef("t", store=str(database)))
    assert result.results[0].tool_calls[0].is_error is False
    refused = result.results[1].tool_calls[0]
    assert refused.is_error and "'deep'" in refused.content and "levels" in refused.content

    reader = textwrap.dedent(
        f"""
        import anyio
        from network.threads import SQLStore

        async def main():
            async with SQLStore({str(database)!r}) as store:
                thread = await store.get_thread("t")
                deltas = [op for r in thread.results for op in r.state_delta]
                print(len(thread.results), len(deltas), type(thread.state["deep"]).__name__)

        anyio.run(main)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", reader], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    calls, deltas, kind = done.stdout.split()
    assert (calls, kind) == ("2", "list") and int(deltas) >= 2
