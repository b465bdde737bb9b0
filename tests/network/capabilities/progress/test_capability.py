"""State progress: a running tool's writes reach a live sink each time the tool waits."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import (
    Agent,
    GuardrailResult,
    ScriptedModel,
    ToolContext,
    call,
    tool,
    tool_output_guardrail,
)
from network import Network, Parallel, RetryPolicy
from network.capabilities.progress import StateProgress
from network.run.emitter import Listener, Observer
from network.run.events import StateDelta, ToolResult
from tests.network.agui.protocol import replay, wire

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

STEPS = ["fetch", "parse", "store"]


def walker(seen: list[Any], shown_while_running: list[bool]) -> Any:
    """A tool that marks each step done, waits, and checks the sink saw the step meanwhile."""

    @tool
    async def walk(ctx: ToolContext) -> str:
        """Walk through the steps."""
        ctx.kv.set("steps", [{"name": name, "status": "pending"} for name in STEPS])
        for index in range(len(STEPS)):
            steps = ctx.kv.get("steps")
            steps[index]["status"] = "done"
            ctx.kv.set("steps", steps)
            await anyio.sleep(0)  # the tool gives control back: its progress goes out
            shown = [e for e in seen if isinstance(e, StateDelta)]
            last = shown[-1].ops[-1]["value"] if shown else None
            shown_while_running.append(last == steps)
        return "all done"

    return walk


def walking_network(seen: list[Any], shown: list[bool], **tool_options: Any) -> Network:
    agent = Agent(
        "worker",
        tools=[walker(seen, shown)],
        model=ScriptedModel([[call("walk")], "Done."]),
    )
    return Network("walk", agents=[agent])


async def test_a_running_tool_s_writes_reach_a_live_sink_before_it_returns() -> None:
    seen: list[Any] = []
    shown: list[bool] = []

    async def sink(event: Any) -> None:
        seen.append(event)

    result = await walking_network(seen, shown).run("go", sinks=[Listener(sink)])
    assert shown == [True, True, True]  # each step was out before the tool went on
    deltas = [i for i, e in enumerate(seen) if isinstance(e, StateDelta)]
    result_at = next(i for i, e in enumerate(seen) if isinstance(e, ToolResult))
    assert len([i for i in deltas if i < result_at]) == 3  # all before the tool's result
    assert result["steps"] == [{"name": n, "status": "done"} for n in STEPS]


async def test_the_final_state_and_the_recorded_delta_are_those_of_a_run_without_a_sink() -> None:
    seen: list[Any] = []
    plain = await walking_network(seen, []).run("go")

    async def sink(event: Any) -> None:
        seen.append(event)

    live = await walking_network(seen, []).run("go", sinks=[Listener(sink)])
    assert live.state.kv.data == plain.state.kv.data
    assert [r.state_delta for r in live.results] == [r.state_delta for r in plain.results]


async def test_the_client_s_copy_replayed_from_the_wire_ends_equal_to_the_server_s() -> None:
    network = walking_network([], [])
    async with network.stream("go") as events:
        got = [event async for event in events]
    client = replay(wire(got))
    assert client.state == events.result.state.snapshot()
    types = client.types
    assert types.index("STATE_DELTA") < types.index("TOOL_CALL_RESULT")


def failing_after_progress(shown_ops: list[Any]) -> Any:
    @tool
    async def migrate(ctx: ToolContext) -> str:
        """Migrate, then fail."""
        ctx.kv.set("phase", "copying")
        ctx.kv.set("draft", {"rows": 3})
        await anyio.sleep(0)
        ctx.kv.delete("kept")
        await anyio.sleep(0)
        raise RuntimeError("disk full")

    return migrate


async def test_a_tool_failing_after_its_progress_was_shown_has_it_taken_back() -> None:
    agent = Agent(
        "worker",
        tools=[failing_after_progress([])],
        model=ScriptedModel([[call("migrate")], "It failed."]),
    )
    network = Network("migrate", agents=[agent])
    async with network.stream("go", state={"phase": "idle", "kept": 1}) as events:
        got = [event async for event in events]
    result = events.result
    client = replay(wire(got))  # every delta applies, strictly
    assert result.state.kv.data == {"phase": "idle", "kept": 1}  # rolled back, as before
    assert client.state == {"phase": "idle", "kept": 1}  # and the client's copy with it
    assert result.results[0].state_delta == []  # the record never held the undone writes
    deltas = client.of("STATE_DELTA")
    assert len(deltas) == 3  # two shown while it ran, one taking them back
    assert deltas[-1]["delta"] == [
        {"op": "add", "path": "/phase", "value": "idle"},
        {"op": "remove", "path": "/draft"},
        {"op": "add", "path": "/kept", "value": 1},
    ]


async def test_a_retried_attempt_s_shown_progress_is_taken_back_before_the_next() -> None:
    attempts: list[int] = []

    @tool(idempotent=True, retry=RetryPolicy(max_attempts=2, backoff=0.001))
    async def flaky(ctx: ToolContext) -> str:
        """Fails once."""
        attempts.append(ctx.attempt)
        ctx.kv.set("log", [f"attempt {ctx.attempt}"])
        await anyio.sleep(0)
        if ctx.attempt == 1:
            raise ConnectionError("reset")
        return "ok"

    agent = Agent("worker", tools=[flaky], model=ScriptedModel([[call("flaky")], "Ok."]))
    async with Network("retry", agents=[agent]).stream("go") as events:
        got = [event async for event in events]
    client = replay(wire(got))
    assert attempts == [1, 2]
    assert client.state == events.result.state.snapshot() == {"log": ["attempt 2"]}


async def test_a_result_a_guardrail_rejects_after_progress_was_shown_is_taken_back() -> None:
    @tool_output_guardrail
    def no_secrets(ctx: Any, check: Any) -> GuardrailResult:
        return GuardrailResult.reject("the result leaks a secret")

    @tool(output_guardrails=[no_secrets])
    async def lookup(ctx: ToolContext) -> str:
        """Look it up."""
        ctx.kv.set("found", "secret")
        await anyio.sleep(0)
        return "secret"

    agent = Agent("worker", tools=[lookup], model=ScriptedModel([[call("lookup")], "No."]))
    async with Network("guarded", agents=[agent]).stream("go") as events:
        got = [event async for event in events]
    client = replay(wire(got))
    assert [d["delta"][0]["op"] for d in client.of("STATE_DELTA")] == ["add", "remove"]
    assert client.state == events.result.state.snapshot() == {}


async def test_a_tool_that_writes_nothing_sends_no_delta() -> None:
    @tool
    async def idle(ctx: ToolContext) -> str:
        """Wait."""
        await anyio.sleep(0)
        await anyio.sleep(0)
        return "rested"

    agent = Agent("worker", tools=[idle], model=ScriptedModel([[call("idle")], "Rested."]))
    async with Network("idle", agents=[agent]).stream("go") as events:
        got = [event async for event in events]
    assert replay(wire(got)).of("STATE_DELTA") == []


async def test_only_a_run_with_a_live_sink_has_the_capability() -> None:
    network = walking_network([], [])
    assert not any(isinstance(c, StateProgress) for c in network._run_stages.capabilities)
    seen: list[Any] = []

    async def sink(event: Any) -> None:
        seen.append(event)

    shown: list[bool] = []
    watched = walking_network(seen, shown)
    await watched.run("go", sinks=[Observer(sink)])  # a watcher (telemetry, logs): as before
    assert shown == [False, False, False]
    assert len([e for e in seen if isinstance(e, StateDelta)]) == 1


async def test_calls_run_side_by_side_show_their_writes_when_they_commit() -> None:
    @tool
    async def left(ctx: ToolContext) -> str:
        """Left."""
        ctx.kv.set("left", 1)
        await anyio.sleep(0)
        return "l"

    @tool
    async def right(ctx: ToolContext) -> str:
        """Right."""
        ctx.kv.set("right", 2)
        await anyio.sleep(0)
        return "r"

    agent = Agent(
        "worker",
        tools=[left, right],
        model=ScriptedModel([[call("left"), call("right")], "Both."]),
    )
    async with Network("pair", agents=[agent]).stream("go") as events:
        got = [event async for event in events]
    client = replay(wire(got))
    assert client.types.index("STATE_DELTA") > client.types.index("TOOL_CALL_RESULT")
    assert client.state == {"left": 1, "right": 2}


async def test_a_tool_s_time_limit_holds_while_its_progress_waits_on_a_slow_sink() -> None:
    @tool(timeout=0.2)
    async def slow(ctx: ToolContext) -> str:
        """Write, then take too long."""
        ctx.kv.set("phase", "started")
        await anyio.sleep(10)
        return "never"

    async def sink(event: Any) -> None:
        if isinstance(event, StateDelta):
            await anyio.sleep(1)  # a client that reads slowly

    agent = Agent("worker", tools=[slow], model=ScriptedModel([[call("slow")]]))
    with anyio.fail_after(5):
        result = await Network("slow", agents=[agent]).run("go", sinks=[Listener(sink)])
    record = result.results[0].tool_calls[0]
    assert record.error_type == "TimeoutError" and "timed out after 0.2 s" in record.error
    assert "phase" not in result  # rolled back, as a timed-out call's writes always are


async def test_a_parallel_branch_s_tool_shows_its_writes_merged_at_the_join() -> None:
    def worker(name: str) -> Agent:
        @tool(name=f"work_{name}")
        async def work(ctx: ToolContext) -> str:
            """Work."""
            ctx.kv.set(name, "done")
            await anyio.sleep(0)
            return "ok"

        return Agent(name, tools=[work], model=ScriptedModel([[call(f"work_{name}")], "done"]))

    left, right = worker("left"), worker("right")

    def route(ctx: Any) -> Any:
        return Parallel(left, right) if ctx.call_count == 0 else None

    network = Network("fan", agents=[left, right], router=route)
    async with network.stream("go") as events:
        got = [event async for event in events]
    client = replay(wire(got))
    assert len(client.of("STATE_DELTA")) == 1  # once, merged, as before
    assert client.state == events.result.state.snapshot() == {"left": "done", "right": "done"}
