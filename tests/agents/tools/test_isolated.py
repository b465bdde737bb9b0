"""Isolated tools (`@tool(isolated=True)`): a worker process, killed when a call hangs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import ConfigurationError, Network

pytestmark = pytest.mark.anyio


def looping(agent: Agent, **options: Any) -> Network:
    return Network(
        "n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None, **options
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _needs_context(ctx: ToolContext) -> None:
    """Needs the run's context."""


async def _async_tool() -> None:
    """An async function."""


async def test_an_isolated_tool_runs_in_another_process_and_writes_through_its_result() -> None:
    from tests.agents.tools.isolated_tools import add, whose_process

    model = ScriptedModel([[call("whose_process"), call("add", a=2, b=3)], "ok"])
    agent = Agent("a", tools=[whose_process, add], model=model)
    result = await looping(agent).run("x")
    pid_record, add_record = result.results[0].tool_calls
    assert not pid_record.is_error and pid_record.result != os.getpid()
    assert add_record.result == {"total": 5} and result.state.kv.get("total") == 5


async def test_a_hung_isolated_tool_is_killed_when_its_run_is_cancelled(tmp_path: Path) -> None:
    from tests.agents.tools.isolated_tools import hang

    pid_file = tmp_path / "pid"
    agent = Agent("a", tools=[hang], model=ScriptedModel([call("hang", pid_file=str(pid_file))]))
    async with anyio.create_task_group() as group:
        group.start_soon(looping(agent).run, "x")
        with anyio.fail_after(120):  # a guard against a worker that never starts, not a timing
            while not pid_file.exists() or not pid_file.read_text():
                await anyio.sleep(0.05)
        pid = int(pid_file.read_text())
        assert _alive(pid)
        group.cancel_scope.cancel()  # the client left
    assert not _alive(pid)  # killed (and reaped), not left running


async def test_a_hung_isolated_tool_times_out_and_is_killed(tmp_path: Path) -> None:
    from tests.agents.tools.isolated_tools import hang

    pid_file = tmp_path / "pid"
    model = ScriptedModel([call("hang", pid_file=str(pid_file)), "went on"])
    agent = Agent("a", tools=[hang], model=model, tool_timeout=3)
    result = await looping(agent).run("x")
    assert result.results[0].tool_calls[0].content.endswith("timed out after 3 s")
    assert result.output == "went on"
    if pid_file.exists() and pid_file.read_text():  # the worker may not even have started
        assert not _alive(int(pid_file.read_text()))


def test_isolated_tools_must_be_importable_and_take_no_context() -> None:
    def local() -> None:
        """A function defined inside another."""

    with pytest.raises(ConfigurationError, match="module level"):
        tool(isolated=True)(local)
    with pytest.raises(ConfigurationError, match="ToolContext or State"):
        tool(isolated=True)(_needs_context)
    with pytest.raises(ConfigurationError, match="cannot be async"):
        tool(isolated=True)(_async_tool)
