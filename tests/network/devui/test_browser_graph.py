"""The network drawn on the page as a graph: nodes in layers, edges as arrows with their
conditions, a loop drawn back up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents import Agent, ScriptedModel
from network import Network
from network.devui import app
from routers import END, GraphRouter
from tests.network.agui.live import serve


def review_loop() -> Network:
    coder = Agent("coder", model=ScriptedModel(["code"]))
    reviewer = Agent("reviewer", model=ScriptedModel(["ok"]))
    router = (
        GraphRouter(start="coder")
        .edge("coder", "reviewer")
        .edge("reviewer", "coder", label="changes requested", when=lambda ctx: False)
        .edge("reviewer", END, label="approved")
    )
    return Network("loop", agents=[coder, reviewer], router=router)


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).bounding_box()
    assert found is not None, selector
    return found


def test_the_graph_is_drawn_with_its_edges_and_their_conditions(page: Any, tmp_path: Path) -> None:
    with serve(app(review_loop(), store=tmp_path / "t.db")) as url:
        page.goto(url)
        page.wait_for_selector("#graph svg .edge", state="attached")
        edges = page.locator("#graph svg .edge")
        assert edges.count() == 4  # START -> coder -> reviewer -> coder | END
        labels = page.locator("#graph svg .edge-label").all_text_contents()
        assert sorted(labels) == ["approved", "changes requested"]
        # layers: each node below the one that first reaches it
        start = box(page, "#graph .node.terminal >> nth=0")
        coder = box(page, "#graph .node[data-agent='coder']")
        reviewer = box(page, "#graph .node[data-agent='reviewer']")
        assert start["y"] < coder["y"] < reviewer["y"]
        # the loop back to the coder bends out to the side instead of crossing the nodes
        loop = page.locator("#graph svg .edge", has=page.locator("text=changes requested"))
        assert " C " in (loop.locator("path").get_attribute("d") or "")
        # every arrow ends at its target node's box
        for edge in range(edges.count()):
            line = edges.nth(edge).locator("path")
            assert line.get_attribute("marker-end") == "url(#arrow)"


def test_handoffs_are_drawn_as_labelled_arrows_between_agents(page: Any, tmp_path: Path) -> None:
    from tests.agents.airline import team

    with serve(app(team()[0], store=tmp_path / "t.db")) as url:
        page.goto(url)
        page.wait_for_selector("#graph svg .edge", state="attached")
        # START -> triage, and triage <-> each of the two agents it hands off to
        assert page.locator("#graph svg .edge").count() == 5
        labels = page.locator("#graph svg .edge-label").all_text_contents()
        assert labels.count("handoff") == 4
        for agent in ("triage", "FAQ Agent", "seat_booking"):
            assert page.locator(f"#graph .node[data-agent='{agent}']").count() == 1
        assert page.locator("#graph .node.router").count() == 0  # no router reaching everyone
