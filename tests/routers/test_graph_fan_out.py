"""`GraphRouter.fan_out`: one node fans out to several that run side by side, then joins."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from agents import Agent, ScriptedModel
from network import ConfigurationError, Network, ParallelWriteWarning
from routers import END, GraphRouter
from tests.routers.helpers import scripted_agent

pytestmark = pytest.mark.anyio


def research_team(**fan_out: Any) -> tuple[list[Agent], GraphRouter]:
    planner = scripted_agent("planner", "the plan")
    web = scripted_agent("web", "web findings")
    papers = scripted_agent("papers", "paper findings")
    writer = scripted_agent("writer", "the report")
    router = (
        GraphRouter(start=planner)
        .fan_out(planner, [web, papers], join=writer, **fan_out)
        .edge(writer, END)
    )
    return [planner, web, papers, writer], router


async def test_fans_out_after_the_source_and_joins_at_the_target() -> None:
    agents, router = research_team()
    result = await Network("research", agents=agents, router=router).run("study X")
    assert [(r.agent, r.branch) for r in result.results] == [
        ("planner", None),
        ("web", "planner.fan_out/web"),
        ("papers", "planner.fan_out/papers"),
        ("writer", None),
    ]
    assert result.output == "the report"


async def test_a_fan_out_condition_decides_like_an_edge_and_join_can_end() -> None:
    start = scripted_agent("start", "hi")
    a, b, solo = scripted_agent("a", "A"), scripted_agent("b", "B"), scripted_agent("solo", "S")
    router = (
        GraphRouter(start=start)
        .fan_out(start, [a, b], join=END, when=lambda ctx: ctx.kv.get("wide", False))
        .edge(start, solo)
        .edge(solo, END)
    )
    network = Network("n", agents=[start, a, b, solo], router=router)
    narrow = await network.run("go")
    wide = await network.run("go", state={"wide": True})
    assert [r.agent for r in narrow.results] == ["start", "solo"]
    assert [r.agent for r in wide.results] == ["start", "a", "b"]


async def test_warns_when_built_if_parallel_agents_declare_one_replaced_key() -> None:
    planner = scripted_agent("planner", "p")
    web = Agent("web", output_key="summary", model=ScriptedModel(["w"]))
    papers = Agent("papers", output_key="summary", model=ScriptedModel(["p"]))
    notes = Agent("notes", output_key="notes", model=ScriptedModel(["n"]))
    router = GraphRouter(start=planner).fan_out(planner, [web, papers, notes], join=END)

    with pytest.warns(ParallelWriteWarning, match="'summary'") as caught:
        Network("n", agents=[planner, web, papers, notes], router=router)
    assert len(caught) == 1
    assert "'web', 'papers'" in str(caught[0].message)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a key that says how to resolve it: no warning
        Network(
            "n",
            agents=[planner, web, papers, notes],
            router=router,
            state_schema={"summary": {"type": str, "conflict": "last"}},
        )
        Network(
            "n",
            agents=[planner, web, papers, notes],
            router=router,
            state_schema={"summary": {"type": list[str]}},  # appends: merges fine
        )


async def test_fan_out_arguments_are_checked() -> None:
    a, b = scripted_agent("a"), scripted_agent("b")
    with pytest.raises(ConfigurationError, match="at least two targets"):
        GraphRouter(start=a).fan_out(a, [b], join=END)
    with pytest.raises(ConfigurationError, match="names an agent twice"):
        GraphRouter(start=a).fan_out(a, [b, b], join=END)
    with pytest.raises(ConfigurationError, match="on_error"):
        GraphRouter(start=a).fan_out(a, [a, b], join=END, on_error="skip")
    with pytest.raises(ConfigurationError, match="max_steps"):
        GraphRouter(start=a).fan_out(a, [a, b], join=END, max_steps=0)


async def test_a_graph_fan_out_gives_its_branches_max_steps() -> None:
    """`max_steps=` as for `Parallel`: a branch still asking for tools after that many calls
    fails (before, `fan_out` took no `max_steps`: its branches always had the default 10)."""
    from agents import call, tool
    from network import MaxStepsExceeded

    @tool
    def look() -> str:
        """Look again."""
        return "nothing yet"

    looker = Agent("looker", tools=[look], model=ScriptedModel(lambda request: call("look")))
    start, other = scripted_agent("start"), scripted_agent("other")
    router = GraphRouter(start=start).fan_out(start, [looker, other], join=END, max_steps=2)
    network = Network("n", agents=[start, looker, other], router=router)
    with pytest.raises(MaxStepsExceeded, match="max_steps=2"):
        await network.run("go")
    assert len(looker.model.requests) == 2  # type: ignore[attr-defined]


async def test_the_drawing_shows_the_fan_out_and_the_join() -> None:
    _, router = research_team()
    drawing = router.to_mermaid()
    for hop in ("planner --> web", "planner --> papers", "web --> writer", "papers --> writer"):
        source, target = hop.split(" --> ")
        assert any(
            source in line and target in line and "-->" in line for line in drawing.splitlines()
        )
