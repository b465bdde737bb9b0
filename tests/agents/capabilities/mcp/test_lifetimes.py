"""An MCP server lives as long as the run that needed it, or the `async with` block holding
it: its stdio process is gone after success, a tool failure, a failed run and cancellation."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, call
from network.errors import ModelError
from tests.agents.capabilities.mcp.servers import alive, stdio_server

pytestmark = pytest.mark.anyio


def server_pid(result: Any) -> int:
    for step in result.state.results:
        for record in step.tool_calls:
            if record.name == "pid":
                return int(record.result["result"])
    raise AssertionError("no pid call")


async def test_the_process_is_gone_after_a_successful_run() -> None:
    model = ScriptedModel([call("pid"), "done"])
    result = await Agent("x", tools=[stdio_server()], model=model).run("x")
    pid = server_pid(result)
    assert pid > 0 and not alive(pid)


async def test_the_process_is_gone_after_a_tool_failure() -> None:
    model = ScriptedModel([call("pid"), call("fail"), "done"])
    result = await Agent("x", tools=[stdio_server()], model=model).run("x")
    assert records_failed(result) == ["fail"]
    assert not alive(server_pid(result))


def records_failed(result: Any) -> list[str]:
    return [r.name for step in result.state.results for r in step.tool_calls if r.is_error]


async def test_the_process_is_gone_after_the_run_fails() -> None:
    model = ScriptedModel([call("pid"), ModelError("provider down")])
    with pytest.raises(ModelError) as caught:
        await Agent("x", tools=[stdio_server()], model=model).run("x")
    assert not alive(server_pid(caught.value.partial_result))


async def test_the_process_is_gone_after_the_run_is_cancelled() -> None:
    seen: list[int] = []
    pid_known = anyio.Event()

    def after_pid(request: Any) -> Any:
        seen.append(int(request.messages[-1].content.split(":")[1].strip(" }")))
        pid_known.set()
        return call("slow", seconds=60)

    model = ScriptedModel([call("pid"), after_pid, "never"])
    agent = Agent("x", tools=[stdio_server()], model=model)
    async with anyio.create_task_group() as group:
        group.start_soon(agent.run, "x")
        await pid_known.wait()
        group.cancel_scope.cancel()
    assert seen and not alive(seen[0])


async def test_async_with_holds_one_process_across_runs_and_stops_it_at_the_end() -> None:
    server = stdio_server()
    async with server:
        first = await Agent("a", tools=[server], model=ScriptedModel([call("pid"), "1"])).run("x")
        second = await Agent("b", tools=[server], model=ScriptedModel([call("pid"), "2"])).run("y")
        pid = server_pid(first)
        assert server_pid(second) == pid
        assert alive(pid)
    assert not alive(pid)


async def test_each_run_outside_async_with_has_its_own_process() -> None:
    server = stdio_server()
    agent = Agent("a", tools=[server], model=ScriptedModel([call("pid"), "1"] * 2))
    first, second = await agent.run("x"), await agent.run("y")
    assert server_pid(first) != server_pid(second)
