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


def test_a_network_led_by_handoffs_is_drawn_as_who_hands_off_to_whom() -> None:
    from tests.agents.airline import team

    network, *_ = team()

    assert network_mermaid(network).splitlines() == [
        "flowchart TD",
        '    START(["START"])',
        '    triage["triage"]',
        '    FAQ_Agent["FAQ Agent"]',
        '    seat_booking["seat_booking"]',
        "    START --> triage",
        '    triage -->|"handoff"| FAQ_Agent',
        '    triage -->|"handoff"| seat_booking',
        '    FAQ_Agent -->|"handoff"| triage',
        '    seat_booking -->|"handoff"| triage',
    ]


def test_handoffs_are_drawn_beside_a_code_router_and_labelled_on_a_graph() -> None:
    from routers import END, GraphRouter
    from tests.agents.airline import team

    def pick(ctx: RunContext) -> Any:
        return None

    _, triage, faq, booking = team()
    drawn = network_mermaid(Network("a", agents=[triage, faq, booking], router=pick))
    assert "    router -.-> triage" in drawn.splitlines()
    assert '    triage -->|"handoff"| seat_booking' in drawn.splitlines()

    def urgent(ctx: RunContext) -> bool:
        return False

    graph = (
        GraphRouter(start="triage")
        .edge("triage", "FAQ Agent", when=urgent)
        .edge("triage", "seat_booking")
        .edge("FAQ Agent", "triage")
        .edge("seat_booking", "triage")
        .edge("triage", END)
    )
    lines = network_mermaid(Network("g", agents=[triage, faq, booking], router=graph)).splitlines()
    assert '    triage -->|"handoff: urgent"| FAQ_Agent' in lines
    assert '    triage -->|"handoff"| seat_booking' in lines
    assert "    triage --> END" in lines  # not a handoff: drawn as before
