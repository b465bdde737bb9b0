"""`agents.step`: the agent call's stages, as the kernel runs them without any capability."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call
from network import Network
from network.run.stages import NO_STAGES

pytestmark = pytest.mark.anyio


async def test_an_agent_with_no_capability_runs_no_stage_but_its_own() -> None:
    agent = Agent("plain", system="Be plain.", model=ScriptedModel(["done"]), output_key="out")
    assert agent.capabilities == ()
    result = await Network("n", agents=[agent]).run("go")
    stages = agent.stages(
        result.state.results and Network("x", agents=[agent])._run_stages.capabilities
    )
    assert stages.instructions == stages.request == stages.record == ()
    assert result["out"] == "done" and result.results[0].prompt[0].content == "Be plain."


async def test_a_skipped_call_is_recorded_skipped() -> None:
    def skip(agent_call: Any) -> None:
        agent_call.skip = True

    agent = Agent("a", model=ScriptedModel([]), hooks={"on_start": skip})
    result = await Network("n", agents=[agent]).run("go")
    assert result.results[0].skipped and result.results[0].output == []


async def test_a_tool_call_of_no_tool_is_an_error_result_naming_the_tools() -> None:
    agent = Agent("a", model=ScriptedModel([call("nope"), "ok"]))
    network = Network(
        "n",
        agents=[agent],
        router=lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )
    result = await network.run("go")
    record = result.results[0].tool_calls[0]
    assert record.is_error and "unknown tool 'nope'" in record.content
    assert NO_STAGES.capabilities == ()
