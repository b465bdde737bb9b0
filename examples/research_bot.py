"""The research bot (the OpenAI Agents SDK's shape): a planner, searches in parallel, a writer.

A planner with a typed answer lists the searches to run; `Parallel.map` runs the search agent
once per search, each branch running its tool loop (search, then summarise) on its own
conversation; a writer with a typed answer turns the summaries into a report, and an output
validator sends it back when the report cites no search. Offline, every model is scripted.

    python examples/research_bot.py "tide energy"
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic import BaseModel

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, Parallel, Retry


class Plan(BaseModel):
    searches: list[str]


class Report(BaseModel):
    summary: str
    sources: list[str]


@tool
def web_search(query: str, ctx: ToolContext) -> str:
    """Search the web for `query`."""
    ctx.kv.set("searched", [query])
    return f"three articles about {query}"


def _plan(request: Any) -> str:
    topic = request.history[-1].content
    return Plan(searches=[f"{topic} costs", f"{topic} sites"]).model_dump_json()


def _search(request: Any) -> Any:
    last = request.history[-1]
    if last.role == "tool":
        return f"summary: {last.content}"
    return call("web_search", query=last.content)


def _write(request: Any) -> str:
    said = "[agent 'search' answered] "  # how the searches' answers reach it (`view`)
    answers = [m.content.removeprefix(said) for m in request.history
               if str(m.content).startswith(said)]  # fmt: skip
    asked = "not accepted" in str(request.history[-1].content)  # the validator's re-ask
    sources = ["search 1", "search 2"] if asked else []
    return Report(summary=" / ".join(answers), sources=sources).model_dump_json()


def build_network() -> Network:
    planner = Agent("planner", output_type=Plan, output_key="plan", model=ScriptedModel(_plan))
    search = Agent("search", tools=[web_search], model=ScriptedModel(_search))
    writer = Agent("writer", output_type=Report, model=ScriptedModel(_write))

    @writer.output_validator
    def cites_its_searches(report: Report) -> Report:
        if not report.sources:
            raise Retry("name the searches the report draws on in `sources`")
        return report

    def router(ctx: Any) -> Any:
        last = ctx.last_result
        if last is None:
            return planner
        if last.agent == "planner":
            return Parallel.map(search, ctx.kv.get("plan").searches, name="searches")
        if last.agent == "search":
            return writer
        return None

    schema = {"searched": {"type": list[str]}}
    return Network("research_bot", agents=[planner, search, writer], router=router,
                   state_schema=schema)  # fmt: skip


def main(topic: str) -> Report:
    result = build_network().run_sync(topic)
    report: Report = result.output_value
    print(f"searched: {result['searched']}")
    print(f"report: {report.summary}")
    print(f"sources: {report.sources}")
    return report


if __name__ == "__main__":
    main(" ".join(sys.argv[1:]) or "tide energy")
