"""Telemetry keeps where a run is in its trace behind the capability seam (`RunContext.local`).

The engine's bookkeeping names no span: the links of a continued run, the span a run started
in a tool's code nests under and the live tool spans of sub-runs are `RunTrace`'s, read by
telemetry alone. What a user reads (`RunResult.trace_id` and `span_id`) is as it was.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network
from network.run.context import RunBookkeeping, RunContext
from network.telemetry.run_trace import RunTrace, link_to, parent_of, run_trace
from tests.network.telemetry.otel import Recorder

pytestmark = pytest.mark.anyio

SEEN: list[Any] = []


def test_the_engines_bookkeeping_names_no_span() -> None:
    fields = {f.name for f in dataclasses.fields(RunBookkeeping)}
    assert not fields & {"trace_links", "trace_parent", "subagent_spans", "trace_here"}
    assert {"trace_id", "span_id"} <= fields  # what RUN_STARTED and RunResult tell the caller


def inner_network(recorder: Recorder) -> Network:
    echo = Agent("echo", model=ScriptedModel(["inner done"]))
    return Network("inner", agents=[echo], telemetry=recorder.telemetry)


def outer_network(recorder: Recorder, inner: Network) -> Network:
    @tool
    async def delegate(ctx: ToolContext) -> str:
        """Run the inner network from the tool's own code."""
        SEEN.append(run_trace(ctx.run).here)  # the agent call's live span
        result = await inner.run("go")
        return str(result.output)

    boss = Agent("boss", model=ScriptedModel([call("delegate")]), tools=[delegate])
    return Network("outer", agents=[boss], telemetry=recorder.telemetry)


async def test_a_run_started_in_a_tool_nests_under_the_agent_span_telemetry_keeps() -> None:
    SEEN.clear()
    recorder = Recorder()
    result = await outer_network(recorder, inner_network(recorder)).run("start")
    assert len(SEEN) == 1  # the tool ran once, in the agent's one call
    agent = recorder.only("invoke_agent boss")
    inner_root = recorder.only("invoke_workflow inner")
    outer_root = recorder.only("invoke_workflow outer")
    here = SEEN[0]
    assert here == (
        format(agent.context.trace_id, "032x"),
        format(agent.context.span_id, "016x"),
        True,
    )
    assert inner_root.parent is not None and inner_root.parent.span_id == agent.context.span_id
    assert inner_root.context.trace_id == outer_root.context.trace_id
    # what a user reads is the root's ids, as before
    assert result.trace_id == format(outer_root.context.trace_id, "032x")
    assert result.span_id == format(outer_root.context.span_id, "016x")


async def test_a_run_of_its_own_has_no_parent_span_and_links_what_it_continues() -> None:
    recorder = Recorder()
    network = inner_network(recorder)
    ctx = network_context(network)
    assert parent_of(ctx) is None
    assert ctx.engine.locals.get(RunTrace) is None  # nothing kept until telemetry asks
    link_to(ctx, ())
    assert ctx.engine.locals.get(RunTrace) is None  # no links: nothing to keep
    link_to(ctx, [("a" * 32, "b" * 16)])
    assert run_trace(ctx).links == (("a" * 32, "b" * 16),)


def network_context(network: Network) -> RunContext:
    return RunContext(network=network, state=network.new_state(None), input="", run_id="run_1")
