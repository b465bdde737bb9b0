"""Warnings point at the user's line: the one that built the network, made the tool, or
wrote the tool whose write failed; never a library file."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, ParallelWriteWarning, ToolStateWarning
from routers import GraphRouter


def test_a_warning_raised_while_a_network_is_built_names_the_users_line() -> None:
    a = Agent("a", model=ScriptedModel([]), output_key="summary")
    b = Agent("b", model=ScriptedModel([]), output_key="summary")
    start = Agent("start", model=ScriptedModel([]))
    graph = GraphRouter(start=start).fan_out(start, [a, b], join=start)
    line = _line() + 2  # the line that builds the network
    with pytest.warns(ParallelWriteWarning) as caught:
        Network("n", agents=[start, a, b], router=graph)
    (warning,) = caught.list
    assert warning.filename == __file__
    assert warning.lineno == line


def test_a_deprecated_spelling_names_the_users_line() -> None:
    agent = Agent("a", model=ScriptedModel([]))
    line = _line() + 2
    with pytest.warns(DeprecationWarning) as caught:
        Network("n", [agent])
    assert caught.list[0].filename == __file__
    assert caught.list[0].lineno == line


@pytest.mark.anyio
async def test_a_tool_writing_an_unstorable_value_is_warned_at_the_tool() -> None:
    @tool
    def stash(ctx: ToolContext) -> str:
        """Stash something that is not JSON data."""
        ctx.kv.set("thing", object())
        return "ok"

    agent = Agent("a", tools=[stash], model=ScriptedModel([call("stash"), "done"]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await agent.run("go")
    (warning,) = [w for w in caught if issubclass(w.category, ToolStateWarning)]
    assert warning.filename == __file__
    assert warning.lineno == stash.fn.__code__.co_firstlineno


def _line() -> Any:
    """The caller's line number."""
    import sys

    return sys._getframe(1).f_lineno
