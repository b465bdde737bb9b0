"""What JSON makes of a tuple and a model on a thread, on every store (memory, SQLite,
PostgreSQL): an untyped key reads back its JSON form (a list, a dict), a declared type reads
back the kind of value that was written (docs/state.md, "State holds JSON data only")."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel, ToolContext, tool
from agents.models.scripted import call
from network import Network, ThreadRef
from network.threads import ThreadStore

pytestmark = pytest.mark.anyio


class Point(BaseModel):
    x: int
    y: int


@tool
def place(ctx: ToolContext) -> str:
    """Store the same values in typed and untyped keys."""
    for key in ("pair", "typed_pair"):
        ctx.state.kv.set(key, (1, 2))
    for key in ("point", "typed_point"):
        ctx.state.kv.set(key, Point(x=3, y=4))
    return "placed"


def network(*script: object) -> Network:
    model = ScriptedModel(list(script))
    schema = {
        "typed_pair": {"type": tuple[int, int] | None},
        "typed_point": {"type": Point | None},
    }
    return Network(
        name="kinds",
        agents=[Agent(name="placer", model=model, tools=[place])],
        max_iter=1,
        state_schema=schema,
    )


async def test_a_reload_reads_back_json_kinds_unless_the_key_declares_its_type(
    open_store: Callable[[], ThreadStore],
) -> None:
    first = await network(call("place"), "done").run(
        "go", thread=ThreadRef("t", store=open_store())
    )
    assert first.state.kv.get("pair") == (1, 2)  # in the run, as written

    again = await network("read").run("more", thread=ThreadRef("t", store=open_store()))
    kv = again.state.kv
    assert list(kv.get("pair")) == [1, 2] and not isinstance(kv.get("pair"), tuple)
    assert kv.get("point") == {"x": 3, "y": 4}
    assert kv.get("typed_pair") == (1, 2) and isinstance(kv.get("typed_pair"), tuple)
    assert kv.get("typed_point") == Point(x=3, y=4)
