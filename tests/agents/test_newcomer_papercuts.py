"""Small things a newcomer trips over, each answered where it happens."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from agents import Agent, ScriptedModel, call, tool
from network import ConfigurationError, Network, StopReason

pytestmark = pytest.mark.usefixtures("quiet_logs")


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def solo(*answers: Any) -> Agent:
    return Agent("solo", tools=[lookup], model=ScriptedModel(list(answers)))


@pytest.mark.anyio
async def test_run_sync_inside_a_running_loop_says_to_await_run() -> None:
    network = Network("n", agents=[solo("hi")])
    with pytest.raises(ConfigurationError, match=r"use `await network.run\(...\)`"):
        network.run_sync("go")
    with pytest.raises(ConfigurationError, match=r"agent 'solo'.*`await network.run"):
        solo("hi").run_sync("go")


def test_agent_run_sync_says_the_agent_answered() -> None:
    result = solo(call("lookup", query="x"), "It is x.").run_sync("what is x?")
    assert result.stop_reason == StopReason.AGENT_ANSWERED == "agent_answered"
    assert result.output == "It is x." and len(result.results) == 2


def test_a_lone_agent_out_of_steps_says_max_iter() -> None:
    agent = solo(call("lookup", query="x"), call("lookup", query="y"))
    assert agent.run_sync("go", max_steps=2).stop_reason == StopReason.MAX_ITER


def test_a_lone_agent_skipped_by_its_hook_says_so() -> None:
    def skip(call_: Any) -> None:
        call_.skip = True

    agent = Agent("shy", model=ScriptedModel([]), hooks={"on_start": skip})
    assert agent.run_sync("go").stop_reason == StopReason.AGENT_SKIPPED


def test_agent_state_schema_says_where_the_schema_goes() -> None:
    with pytest.raises(ConfigurationError, match=r"Network\(\.\.\., state_schema=\.\.\.\)"):
        Agent("a", state_schema={"plan": {"type": str}})  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_plain_function_works_as_a_sink() -> None:
    seen: list[str] = []
    result = await Network("n", agents=[solo("hi")]).run(
        "go", sinks=[lambda e: seen.append(e.type)]
    )
    assert result.output == "hi"
    assert seen[0] == "RUN_STARTED" and seen[-1] == "RUN_FINISHED"


@pytest.mark.anyio
async def test_a_sink_that_is_not_callable_is_refused_clearly() -> None:
    with pytest.raises(ConfigurationError, match="event sink 42 is not callable"):
        await Network("n", agents=[solo("hi")]).run("go", sinks=[42])  # type: ignore[list-item]


def test_a_finished_result_shows_itself_in_repr_rich_and_html() -> None:
    network = Network("n", agents=[solo(call("lookup", query="<b>x</b>"), "Answer <i>")])
    network.router = lambda ctx: network.agents["solo"] if ctx.call_count < 2 else None
    result = network.run_sync("go", state={"topic": "<script>alert(1)</script>"})
    text = repr(result)
    assert text.startswith("RunResult(stop_reason='router_finished', calls=2, output='Answer <i>'")
    assert "keys=['topic']" in text
    console = Console(record=True, width=120, color_system=None)
    console.print(result)
    shown = console.export_text()
    assert "stop reason" in shown and "router_finished" in shown
    assert "solo -> solo" in shown and "Answer <i>" in shown and "state topic" in shown
    page = result._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "Answer &lt;i&gt;" in page and "router_finished" in page
