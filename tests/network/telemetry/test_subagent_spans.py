"""A sub-run's trace (an agent or a network used as a tool) nests under the tool's span.

Checked span by span with the real SDK and its in-memory exporter: the supervisor's
`execute_tool` span is the parent of the sub-run's `invoke_workflow` root, whose agent, chat
and tool spans sit under it as in any run; one trace id throughout. A sub-run waiting for a
person ends its tool span as interrupted, and the run that answers it traces the rest.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call, tool
from network import Network
from tests.agents.capabilities.subagents.subagents import (
    billing_network,
    research_team,
    researcher,
    supervised,
    supervisor_script,
)
from tests.network.telemetry.otel import Recorder, tree

pytestmark = pytest.mark.anyio


def traced(tools: list[Any], tool: str, recorder: Recorder) -> Network:
    model = ScriptedModel(supervisor_script(tool, "tides"))
    return supervised(tools, model, telemetry=recorder.telemetry)


async def test_an_agent_tools_run_nests_under_its_tool_span() -> None:
    recorder = Recorder()
    result = await traced([researcher().as_tool(name="ask")], "ask", recorder).run("Go")
    assert result.output == "Supervisor: Research says tides: found"
    assert tree(recorder.spans) == [
        (
            "invoke_workflow desk",
            [
                (
                    "invoke_agent boss",
                    [
                        ("chat scripted", []),
                        (
                            "execute_tool ask",
                            [
                                (
                                    "invoke_workflow researcher",
                                    [
                                        (
                                            "invoke_agent researcher",
                                            [("chat scripted", []), ("execute_tool look_up", [])],
                                        ),
                                        ("invoke_agent researcher", [("chat scripted", [])]),
                                    ],
                                )
                            ],
                        ),
                    ],
                ),
                ("invoke_agent boss", [("chat scripted", [])]),
            ],
        )
    ]
    assert len({span.context.trace_id for span in recorder.spans}) == 1
    tool = recorder.only("execute_tool ask")
    inner = recorder.only("invoke_workflow researcher")
    assert inner.parent is not None and inner.parent.span_id == tool.context.span_id
    assert tool.attributes["gen_ai.tool.name"] == "ask"
    assert (
        tool.attributes["agent_network.subagent_run_id"] == inner.attributes["agent_network.run_id"]
    )
    assert tool.start_time <= inner.start_time and inner.end_time <= tool.end_time


async def test_a_networks_run_nests_and_an_interrupted_one_resumes_traced() -> None:
    recorder = Recorder()
    team = research_team()
    team.telemetry = recorder.telemetry
    result = await traced([team.as_tool()], "research", recorder).run("Go")
    inner = recorder.only("invoke_workflow research")
    assert inner.parent is not None
    assert inner.parent.span_id == recorder.only("execute_tool research").context.span_id
    assert result.output is not None

    recorder.clear()
    billing = billing_network()
    billing.telemetry = recorder.telemetry
    network = traced([billing.as_tool()], "billing", recorder)
    stopped = await network.run("Refund")
    held = recorder.only("execute_tool billing")
    assert held.attributes["agent_network.stop_reason"] == "interrupted"
    waiting = recorder.only("invoke_workflow billing")
    assert waiting.parent is not None and waiting.parent.span_id == held.context.span_id
    recorder.clear()
    await network.run(stopped.resume([stopped.interrupts[0].accept()]))
    answered = recorder.only("execute_tool billing")
    continued = recorder.only("invoke_workflow billing")
    assert continued.parent is not None and continued.parent.span_id == answered.context.span_id
    assert [s.name for s in recorder.named("execute_tool refund")] == ["execute_tool refund"]


@pytest.mark.parametrize("sampled", [False, True])
async def test_a_sub_run_follows_its_parent_runs_sampling_decision(sampled: bool) -> None:
    """With a parent-based sampler (the SDK's default) and the run sampled out, the sub-run's
    root was still made under a parent marked sampled: its spans were exported alone, an
    orphan fragment under a tool span no backend ever receives."""
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON, ParentBased

    recorder = Recorder()
    recorder.tracer_provider.sampler = ParentBased(ALWAYS_ON if sampled else ALWAYS_OFF)
    await traced([researcher().as_tool(name="ask")], "ask", recorder).run("Go")
    names = sorted(span.name for span in recorder.spans)
    if sampled:
        assert "invoke_workflow researcher" in names and "invoke_workflow desk" in names
    else:
        assert names == []


@pytest.mark.parametrize("sampled", [True, False])
async def test_a_run_started_in_a_tools_code_nests_under_the_calling_agent(sampled: bool) -> None:
    """`await other.run(...)` inside a tool (the delegation docs/telemetry.md shows, a sub-run
    for spending) was a trace of its own: no parent, another trace id, and its own sampling
    decision (a caller sampled out still exported it). It now nests under the calling agent's
    span (the tool's own span is written after the call, from its record), in one trace."""
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON, ParentBased

    recorder = Recorder()
    recorder.tracer_provider.sampler = ParentBased(ALWAYS_ON if sampled else ALWAYS_OFF)
    inner = Network(
        "inner",
        agents=[Agent("helper", model=ScriptedModel(["Inner answer."]))],
        telemetry=recorder.telemetry,
    )

    @tool
    async def delegate(question: str) -> str:
        """Ask the inner network."""
        return (await inner.run(question)).output or ""

    outer = Network(
        "outer",
        agents=[
            Agent(
                "caller",
                model=ScriptedModel([call("delegate", question="Why?"), "Done."]),
                tools=[delegate],
            )
        ],
        telemetry=recorder.telemetry,
    )
    result = await outer.run("Go.")

    if not sampled:
        assert recorder.spans == []
        return
    calling = recorder.only("invoke_agent caller")
    inner_root = recorder.only("invoke_workflow inner")
    assert inner_root.parent is not None
    assert inner_root.parent.span_id == calling.context.span_id
    assert {f"{span.context.trace_id:032x}" for span in recorder.spans} == {result.trace_id}
    tool_span = recorder.only("execute_tool delegate")
    assert tool_span.parent is not None and tool_span.parent.span_id == calling.context.span_id
