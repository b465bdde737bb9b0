"""Checked by mypy (tests/typing/test_deps_typed.py): `deps` keeps its type everywhere.

Also importable and runnable: `assert_type` does nothing at run time.
"""

from __future__ import annotations

from typing import Any, assert_type

from agents import Agent, ToolContext, tool
from network import Network, RunResult, ThreadRef
from network.run.context import RunContext


class Clients:
    """The application's live clients."""

    def __init__(self) -> None:
        self.base_url = "http://127.0.0.1"


@tool
def fetch(path: str, ctx: ToolContext[Clients]) -> str:
    """Fetch a path."""
    assert_type(ctx.deps, Clients)
    return ctx.deps.base_url + path


def route(ctx: RunContext[Clients]) -> Any:
    assert_type(ctx.deps, Clients)
    return None


def instructions(ctx: RunContext[Clients]) -> str:
    assert_type(ctx.deps, Clients)
    return f"Use {ctx.deps.base_url}"


agent = Agent("fetcher", system=instructions, tools=[fetch])
inferred = Network("typed", agents=[agent], router=route)
assert_type(inferred, Network[Clients])
declared = Network("declared", agents=[agent], deps_type=Clients)
assert_type(declared, Network[Clients])


async def main() -> None:
    await inferred.run("go", deps=Clients())
    await inferred.run("go", deps="not clients")  # type: ignore[arg-type]
    # run_sync and stream are typed like run (a ParamSpec), continuations included
    assert_type(inferred.run_sync("go", deps=Clients()), RunResult)
    inferred.run_sync("go", deps="not clients")  # type: ignore[arg-type]
    inferred.stream("go", no_such_option=1)  # type: ignore[call-arg]
    inferred.run_sync("go", thread=3)  # type: ignore[arg-type]
    stopped = await inferred.run("go", thread=ThreadRef("t1", user_id="ann"))
    await inferred.run(stopped.resume([]), max_iter=2)
    await inferred.run(object())  # type: ignore[arg-type]
