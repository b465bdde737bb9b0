"""`GraphRouter`: edges with conditions, checked when the network is built, drawn as Mermaid."""

from __future__ import annotations

import pytest

from agents import call, tool
from network import ConfigurationError, Network, RunContext, State, StopReason
from routers import END, GraphRouter, network_mermaid
from tests.routers.helpers import scripted_agent


@tool
def approve(state: State) -> str:
    """Approve the code."""
    state.kv.set("approved", True)
    return "approved"


def needs_work(ctx: RunContext) -> bool:
    return not ctx.kv.get("approved")


def review_team() -> tuple[Network, GraphRouter]:
    planner = scripted_agent("planner", "the plan")
    coder = scripted_agent("coder", "draft 1", "draft 2")
    reviewer = scripted_agent("reviewer", "needs tests", call("approve"), tools=[approve])
    router = (
        GraphRouter(start=planner)
        .edge(planner, coder)
        .edge(coder, reviewer)
        .edge(reviewer, coder, when=needs_work)
        .edge(reviewer, END)
    )
    return Network("review", agents=[planner, coder, reviewer], router=router), router


@pytest.mark.anyio
async def test_loops_between_coder_and_reviewer_until_state_says_approved() -> None:
    network, _ = review_team()

    result = await network.run("write a parser")

    assert [r.agent for r in result.results] == [
        "planner",
        "coder",
        "reviewer",
        "coder",
        "reviewer",
    ]
    assert result["approved"] is True
    assert result.stop_reason == StopReason.ROUTER_FINISHED


@pytest.mark.anyio
async def test_async_conditions_and_first_holding_edge_wins() -> None:
    a, b, c = scripted_agent("a"), scripted_agent("b"), scripted_agent("c")

    async def never(ctx: RunContext) -> bool:
        return False

    router = GraphRouter(start="a").edge(a, b, when=never).edge(a, c).edge(a, END)
    result = await Network("abc", agents=[a, b, c], router=router.edge(b, END)).run("x")

    assert [r.agent for r in result.results] == ["a", "c"]


@pytest.mark.anyio
async def test_no_edge_holding_ends_the_run() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    router = GraphRouter(start=a).edge(a, b, when=lambda ctx: False)

    result = await Network("ab", agents=[a, b], router=router).run("x")

    assert [r.agent for r in result.results] == ["a"]
    assert result.stop_reason == StopReason.ROUTER_FINISHED


def test_an_unknown_agent_is_a_configuration_error() -> None:
    a = scripted_agent("a")
    router = GraphRouter(start=a).edge(a, "ghost")

    with pytest.raises(ConfigurationError, match="agent 'ghost' is not in network 'solo'"):
        Network("solo", agents=[a], router=router)


def test_unreachable_nodes_are_a_configuration_error() -> None:
    a, b, c = scripted_agent("a"), scripted_agent("b"), scripted_agent("c")
    router = GraphRouter(start=a).edge(a, END).edge(b, c)

    with pytest.raises(ConfigurationError) as raised:
        Network("abc", agents=[a, b, c], router=router)
    assert "graph router: agents 'b', 'c' cannot be reached from start 'a'" in str(raised.value)
    lone = GraphRouter(start=a).edge(a, END).edge(b, END)
    with pytest.raises(ConfigurationError, match="agent 'b' cannot be reached from start 'a'"):
        Network("ab", agents=[a, b], router=lone)


def test_several_unknown_agents_are_named_in_one_sentence() -> None:
    a = scripted_agent("a")
    router = GraphRouter(start=a).edge(a, "ghost").edge(a, "phantom")
    with pytest.raises(ConfigurationError, match="agents 'ghost', 'phantom' are not in network"):
        Network("solo", agents=[a], router=router)


def test_another_agent_with_the_same_name_is_refused() -> None:
    a, impostor = scripted_agent("a"), scripted_agent("a")

    with pytest.raises(ConfigurationError, match="'a'"):
        Network("solo", agents=[a], router=GraphRouter(start=impostor))


def test_building_mistakes_are_reported_at_once() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    with pytest.raises(ConfigurationError, match="already an edge"):
        GraphRouter(start=a).edge(a, b).edge(a, b)
    with pytest.raises(ConfigurationError, match="END has no outgoing"):
        GraphRouter(start=a).edge(END, a)
    with pytest.raises(ConfigurationError, match="not callable"):
        GraphRouter(start=a).edge(a, b, when=True)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="not an agent or a name"):
        GraphRouter(start=a).edge(a, 42)


def test_a_refused_building_step_leaves_the_graph_as_it_was() -> None:
    # Before, the nodes of a refused step stayed: caught and built on, the router made the
    # Network fail on "agent 'b' cannot be reached from start 'a'".
    a, b, c, d = (scripted_agent(name) for name in "abcd")
    router = GraphRouter(start=a).edge(a, b).edge(b, END)
    refused = [
        lambda: router.fan_out(b, [c, d], join=END, on_error="retry"),
        lambda: router.fan_out(b, [c, d], join=END, max_concurrency=0),
        lambda: router.fan_out(c, [d, b], join=END, name="x/y"),
        lambda: router.edge(c, 42),
        lambda: router.edge(d, scripted_agent("a")),  # another agent named "a"
    ]
    for step in refused:
        with pytest.raises(ConfigurationError):
            step()
    assert sorted(node for node in router.graph.nodes if node is not END) == ["a", "b"]
    result = Network("team", agents=[a, b, c, d], router=router).run_sync("go")
    assert [call.agent for call in result.results] == ["a", "b"]


def test_the_graph_is_a_networkx_digraph() -> None:
    _, router = review_team()
    graph = router.graph

    assert list(graph.successors("reviewer")) == ["coder", END]
    assert graph.edges["reviewer", "coder"]["label"] == "needs_work"
    with pytest.raises(Exception):  # noqa: B017 - a read-only view refuses any change
        graph.add_edge("coder", "planner")


def test_mermaid_draws_nodes_edges_labels_and_end() -> None:
    network, router = review_team()
    drawing = router.to_mermaid()
    lines = drawing.splitlines()

    assert lines[0] == "flowchart TD"
    for line in (
        '    START(["START"])',
        '    planner["planner"]',
        '    coder["coder"]',
        '    reviewer["reviewer"]',
        '    END(["END"])',
        "    START --> planner",
        "    planner --> coder",
        "    coder --> reviewer",
        '    reviewer -->|"needs_work"| coder',
        "    reviewer --> END",
    ):
        assert line in lines
    assert network_mermaid(network) == drawing


def test_mermaid_labels_and_awkward_names() -> None:
    end, other = scripted_agent("end"), scripted_agent("code review")
    router = (
        GraphRouter(start=end)
        .edge(end, other, label='if "ready"')
        .edge(other, end, when=lambda ctx: True)
    )
    drawing = router.to_mermaid()

    assert '    end_["end"]' in drawing
    assert '    code_review["code review"]' in drawing
    assert '    end_ -->|"if #quot;ready#quot;"| code_review' in drawing
    assert '    code_review -->|"when"| end_' in drawing
    assert '(["END"])' not in drawing  # no edge leads to END, so it is not drawn
