"""Hung tools: a time limit per tool, agent or network; a cancelled run abandons a blocking tool."""

from __future__ import annotations

import threading
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


@tool
async def hang() -> str:
    """Wait forever."""
    await anyio.sleep_forever()
    return "never"


async def test_an_async_tool_past_its_timeout_is_an_error_the_model_sees() -> None:
    @tool(timeout=0.05)
    async def slow() -> str:
        """Wait forever."""
        await anyio.sleep_forever()
        return "never"

    model = ScriptedModel([call("slow"), "went on"])
    result = await looping(Agent("a", tools=[slow], model=model)).run("x")
    record = result.results[0].tool_calls[0]
    assert record.is_error and record.content == "Error: tool 'slow' timed out after 0.05 s"
    told = [m for m in model.requests[1].history if m.role == "tool"]
    assert told[0].is_error and "timed out" in str(told[0].content)
    assert result.output == "went on"


@pytest.mark.parametrize(
    ("agent_limit", "network_limit", "expected"),
    [(None, 0.05, "0.05"), (0.04, 30, "0.04")],
    ids=["network default", "agent over network"],
)
async def test_the_agent_and_the_network_set_defaults(
    agent_limit: float | None, network_limit: float, expected: str
) -> None:
    model = ScriptedModel([call("hang"), "went on"])
    agent = Agent("a", tools=[hang], model=model, tool_timeout=agent_limit)
    result = await looping(agent, tool_timeout=network_limit).run("x")
    assert result.results[0].tool_calls[0].content.endswith(f"timed out after {expected} s")
    assert result.output == "went on"


async def test_a_timed_out_tool_leaves_none_of_its_writes() -> None:
    @tool(timeout=0.05)
    async def half_done(ctx: ToolContext) -> str:
        """Write, then hang."""
        ctx.kv.set("progress", "half")
        await anyio.sleep_forever()
        return "never"

    model = ScriptedModel([call("half_done"), "went on"])
    result = await looping(Agent("a", tools=[half_done], model=model)).run("x")
    assert result.results[0].tool_calls[0].is_error
    assert not result.state.kv.has("progress")


async def test_a_hung_blocking_tool_times_out_and_its_late_writes_never_land() -> None:
    release = threading.Event()
    finished = threading.Event()

    @tool(timeout=0.05)  # a sync tool with a timeout runs in a worker thread
    def stuck(ctx: ToolContext) -> str:
        """Wait until released, then write."""
        release.wait(30)
        ctx.kv.set("late", "written after the timeout")
        finished.set()
        return "late"

    assert stuck.blocking
    model = ScriptedModel([call("stuck"), "went on"])
    result = await looping(Agent("a", tools=[stuck], model=model)).run("x")
    assert result.results[0].tool_calls[0].content.endswith("timed out after 0.05 s")
    assert result.output == "went on"
    release.set()  # the abandoned thread now finishes and writes to its own dropped view
    await anyio.to_thread.run_sync(finished.wait, 30)
    assert not result.state.kv.has("late")


async def test_a_cancelled_run_does_not_wait_for_a_hanging_blocking_tool() -> None:
    started = threading.Event()
    release = threading.Event()
    watchdog = threading.Timer(30, release.set)  # frees the thread even if the test fails
    watchdog.start()

    @tool(blocking=True)
    def stuck() -> str:
        """Hang until released (no timeout: only the cancellation can end the call)."""
        started.set()
        release.wait()
        return "done"

    agent = Agent("a", tools=[stuck], model=ScriptedModel([call("stuck"), "never"]))
    network = looping(agent)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(network.run, "x")
            await anyio.to_thread.run_sync(started.wait, 30)
            group.cancel_scope.cancel()  # the client left
        # The run ended while the tool's thread was still stuck: it was abandoned, not awaited.
        assert not release.is_set()
    finally:
        release.set()
        watchdog.cancel()


async def test_a_tool_raising_its_own_timeout_error_is_reported_as_raised() -> None:
    @tool(timeout=30)
    async def upstream() -> str:
        """Call a service that times out."""
        raise TimeoutError("upstream took too long")

    agent = Agent("a", tools=[upstream], model=ScriptedModel([call("upstream"), "ok"]))
    result = await looping(agent).run("x")
    record = result.results[0].tool_calls[0]
    assert record.is_error and "upstream took too long" in record.content


@pytest.mark.parametrize("bad", [0, -1, "5"])
def test_timeouts_must_be_positive_numbers(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="timeout"):
        tool(timeout=bad)(lambda: None)
    with pytest.raises(ConfigurationError, match="agent 'a': tool_timeout"):
        Agent("a", tool_timeout=bad)
    with pytest.raises(ConfigurationError, match="network 'n': tool_timeout"):
        Network("n", agents=[Agent("a")], tool_timeout=bad)


def test_bad_tool_defaults_are_refused_naming_the_agent_or_network() -> None:
    with pytest.raises(
        ConfigurationError, match=r"agent 'a': tool_timeout \(seconds\) must be a finite number > 0"
    ):
        Agent("a", tool_timeout=0)
    with pytest.raises(
        ConfigurationError,
        match=r"network 'n': tool_timeout \(seconds\) must be a finite number > 0",
    ):
        Network("n", agents=[Agent("a")], tool_timeout="5")
    with pytest.raises(ConfigurationError, match="agent 'a': tool_retry must be a RetryPolicy"):
        Agent("a", tool_retry=3)
    with pytest.raises(ConfigurationError, match="network 'n': tool_retry must be a RetryPolicy"):
        Network("n", agents=[Agent("a")], tool_retry={"max_attempts": 3})
