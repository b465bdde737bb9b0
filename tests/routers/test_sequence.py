"""`sequence(...)`: agents in order, once each, then the run finishes."""

from __future__ import annotations

import pytest

from network import Network, RoutingError, StopReason
from routers import network_mermaid, sequence
from tests.routers.helpers import scripted_agent


@pytest.mark.anyio
async def test_runs_agents_in_order_then_finishes() -> None:
    planner, coder, reviewer = (scripted_agent(n) for n in ("planner", "coder", "reviewer"))
    network = Network("team", [planner, coder, reviewer], sequence(planner, "coder", reviewer))

    result = await network.run("build it")

    assert [r.agent for r in result.results] == ["planner", "coder", "reviewer"]
    assert result.stop_reason == StopReason.ROUTER_FINISHED
    assert result.output == "reviewer done"


@pytest.mark.anyio
async def test_each_run_starts_from_the_first_agent() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    network = Network("pair", [a, b], sequence(a, b))

    first = await network.run("one")
    second = await network.run("two")

    assert [r.agent for r in first.results] == [r.agent for r in second.results] == ["a", "b"]


def test_an_unknown_agent_fails_when_the_network_is_built() -> None:
    with pytest.raises(RoutingError, match="ghost"):
        Network("team", [scripted_agent("a")], sequence("a", "ghost"))


def test_needs_an_agent() -> None:
    with pytest.raises(Exception, match="at least one agent"):
        sequence()


def test_draws_a_chain() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    drawing = network_mermaid(Network("pair", [a, b], sequence(a, b)))

    assert drawing.splitlines()[0] == "flowchart TD"
    assert "    START --> a" in drawing
    assert "    a --> b" in drawing
    assert "    b --> END" in drawing


def test_a_repeated_agent_numbers_the_steps() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    drawing = sequence(a, b, a).to_mermaid()

    assert '    a -->|"2"| b' in drawing
    assert '    b -->|"3"| a' in drawing
    assert '    a -->|"4"| END' in drawing
