"""Guardrail spans, checked one by one: `apply_guardrail {name}` under the agent call it
checked, with a guardrail agent's chat spans under it; a trip ends the agent span cleanly."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel, call, tool
from network import Network
from network.capabilities.guardrails import GuardrailResult, output_guardrail, tool_input_guardrail
from tests.network.telemetry.otel import Recorder, tree

pytestmark = pytest.mark.anyio


class Verdict(BaseModel):
    tripped: bool
    reason: str


def judge(tripped: bool) -> Agent:
    answer = f'{{"tripped": {str(tripped).lower()}, "reason": "r"}}'
    return Agent(
        "relevance", model=ScriptedModel([answer], name="judge-model"), output_type=Verdict
    )


@output_guardrail
def polite(ctx: Any, answer: str) -> GuardrailResult:
    return GuardrailResult.allow("fine")


async def test_a_passing_run_has_a_span_per_guardrail_under_its_agent(quiet_logs: None) -> None:
    recorder = Recorder()

    @tool_input_guardrail
    def seat_ok(ctx: Any, check: Any) -> GuardrailResult:
        return GuardrailResult.allow()

    @tool(input_guardrails=[seat_ok])
    def book(seat: str) -> str:
        """Book."""
        return "booked"

    agent = Agent(
        "triage",
        model=ScriptedModel([[call("book", seat="1A")]], name="agent-model"),
        tools=[book],
        input_guardrails=[judge(False)],
        output_guardrails=[polite],
    )
    network = Network("air", agents=[agent], telemetry=recorder.telemetry)
    result = await network.run("my flight")
    assert result.stop_reason == "router_finished"

    ((root, (agent_node,)),) = tree(recorder.spans)
    assert root == "invoke_workflow air"
    name, children = agent_node
    assert name == "invoke_agent triage"
    assert sorted(child[0] for child in children) == [
        "apply_guardrail relevance",
        "apply_guardrail seat_ok",
        "chat agent-model",
        "execute_tool book",
    ]
    assert ("apply_guardrail relevance", [("chat judge-model", [])]) in children
    span = recorder.only("apply_guardrail relevance")
    assert dict(span.attributes) == {
        "gen_ai.operation.name": "apply_guardrail",
        "gen_ai.guardrail.component.name": "relevance",
        "gen_ai.guardrail.source": "input",
        "gen_ai.agent.name": "triage",
        "agent_network.guardrail.tripped": False,
    }
    assert span.status.status_code.name == "UNSET"
    tool_span = recorder.only("apply_guardrail seat_ok")
    assert tool_span.attributes["gen_ai.guardrail.source"] == "tool_input"
    assert tool_span.attributes["gen_ai.tool.name"] == "book"
    assert tool_span.attributes["gen_ai.tool.call.id"] == result.results[0].tool_calls[0].id
    judge_chat = recorder.only("chat judge-model")
    assert judge_chat.attributes["gen_ai.agent.name"] == "relevance"
    # the run's usage tokens include the guardrail's request
    root_span = recorder.only("invoke_workflow air")
    assert root_span.attributes["gen_ai.usage.output_tokens"] == result.usage.completion_tokens
    assert result.usage.completion_tokens > result.results[0].usage.completion_tokens


async def test_a_tripped_run_ends_its_agent_span_naming_the_guardrail(quiet_logs: None) -> None:
    recorder = Recorder()

    class Slow:
        name = "slow"
        provider = "scripted"

        async def complete(self, request: Any, on_chunk: Any = None) -> Any:
            await anyio.sleep(5)
            raise AssertionError("cancelled before it answers")

    agent = Agent("triage", model=Slow(), input_guardrails=[judge(True)])  # type: ignore[arg-type]
    network = Network("air", agents=[agent], telemetry=recorder.telemetry)
    with anyio.fail_after(3):
        result = await network.run("a recipe?")
    assert result.stop_reason == "guardrail"

    assert tree(recorder.spans) == [
        (
            "invoke_workflow air",
            [
                (
                    "invoke_agent triage",
                    [("apply_guardrail relevance", [("chat judge-model", [])])],
                )
            ],
        )
    ]
    agent_span = recorder.only("invoke_agent triage")
    assert agent_span.attributes["agent_network.guardrail"] == "relevance"
    assert agent_span.status.status_code.name == "UNSET"  # stopped, not failed
    guard = recorder.only("apply_guardrail relevance")
    assert guard.attributes["agent_network.guardrail.tripped"] is True
    root = recorder.only("invoke_workflow air")
    assert root.attributes["agent_network.stop_reason"] == "guardrail"
