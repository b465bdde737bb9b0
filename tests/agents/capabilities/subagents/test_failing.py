"""`as_tool(on_failure="raise")` fails the caller's run; `output_extractor` picks the tool's
result from the sub-run's `RunResult`."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call
from network import ConfigurationError, ModelError, Network, ToolError

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


def broken() -> Agent:
    return Agent("helper", model=ScriptedModel([ModelError("provider down", model="m")]))


def boss(tool: Any) -> Agent:
    script = [call(tool.name, input="do it"), "boss done"]
    return Agent("boss", tools=[tool], model=ScriptedModel(script))


async def test_by_default_a_failed_sub_agent_is_an_error_result_and_the_run_goes_on() -> None:
    result = await boss(broken().as_tool()).run("go")
    assert result.output == "boss done"
    (failed,) = result.tool_errors
    assert failed.name == "helper" and "provider down" in failed.content


async def test_on_failure_raise_fails_the_callers_run_naming_the_sub_agent() -> None:
    supervisor = boss(broken().as_tool(on_failure="raise"))
    with pytest.raises(ToolError, match="agent 'helper' failed.*on_failure='raise'.*provider"):
        await supervisor.run("go")
    assert len(supervisor.model.requests) == 1  # type: ignore[union-attr]  # never asked again


async def test_the_error_that_fails_the_callers_run_chains_the_sub_runs_own() -> None:
    # its __cause__ was None: the sub-run's exception was lost with the tool's record
    supervisor = boss(broken().as_tool(on_failure="raise"))
    with pytest.raises(ToolError) as caught:
        await supervisor.run("go")
    cause = caught.value.__cause__
    assert isinstance(cause, ModelError) and "provider down" in str(cause)


async def test_a_network_tool_takes_on_failure_too() -> None:
    team = Network("team", agents=[broken()])
    with pytest.raises(ToolError, match="network 'team' failed"):
        await boss(team.as_tool(on_failure="raise")).run("go")


async def test_output_extractor_picks_the_result_from_the_sub_runs_result() -> None:
    helper = Agent("helper", model=ScriptedModel(["a long answer"]))
    tool = helper.as_tool(output_extractor=lambda result: f"{len(result.this_run)} call(s)")
    supervisor = boss(tool)
    await supervisor.run("go")
    assert supervisor.model.requests[-1].history[-1].content == "1 call(s)"  # type: ignore[union-attr]


def test_bad_options_are_refused_naming_the_agent() -> None:
    with pytest.raises(ConfigurationError, match="agent 'helper'.*on_failure"):
        broken().as_tool(on_failure="explode")
    with pytest.raises(ConfigurationError, match="agent 'helper'.*output_extractor"):
        broken().as_tool(output_extractor="text")  # type: ignore[arg-type]
