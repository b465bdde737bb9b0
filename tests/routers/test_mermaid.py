"""`network_mermaid`: any network drawn as Mermaid, whatever its router."""

from __future__ import annotations

from typing import Any

from agents import ScriptedModel
from network import Network, RunContext
from routers import network_mermaid, routing_agent
from tests.routers.helpers import scripted_agent


def test_a_function_router_is_drawn_as_a_router_node_reaching_every_agent() -> None:
    planner, coder = scripted_agent("planner"), scripted_agent("coder")

    def pick_next(ctx: RunContext) -> Any:
        return None

    drawing = network_mermaid(Network("team", agents=[planner, coder], router=pick_next))

    assert drawing.splitlines() == [
        "flowchart TD",
        '    router{{"router: function pick_next"}}',
        '    planner["planner"]',
        "    router -.-> planner",
        '    coder["coder"]',
        "    router -.-> coder",
    ]


def test_a_routing_agent_is_noted_as_such() -> None:
    network = Network(
        "team",
        agents=[scripted_agent("planner"), scripted_agent("router")],
        router=routing_agent(ScriptedModel([])),
    )
    drawing = network_mermaid(network)

    assert '    router{{"router: routing_agent"}}' in drawing
    # An agent that happens to be called "router" gets a node of its own.
    assert '    router_2["router"]' in drawing
    assert "    router -.-> router_2" in drawing


def test_a_lambda_and_the_one_agent_default() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    assert '"router: function"' in network_mermaid(
        Network("ab", agents=[a, b], router=lambda ctx: None)
    )
    assert '"router: function once"' in network_mermaid(Network("a", agents=[a]))
