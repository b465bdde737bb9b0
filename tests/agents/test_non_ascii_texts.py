"""Text a model reads that the library writes as JSON (a tool's result, a person's `respond`
value, a client tool's result, a typed value in instructions) keeps non-ASCII characters as
they are, as LangGraph's ToolNode does (its tests/test_react_agent.py::
test_tool_node_ensure_utf8: `json.dumps(data, ensure_ascii=False)`). Before, "星期一" reached
the model as "\\u661f\\u671f\\u4e00": several tokens a character, and text a model may misread.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call, tool
from network import Network, Resume, ThreadRef
from network.threads import MemoryStore

pytestmark = pytest.mark.anyio

DAYS = ["星期一", "水曜日", "목요일", "Élise's Friday"]
DAYS_JSON = '["星期一", "水曜日", "목요일", "Élise\'s Friday"]'


async def test_a_tools_result_keeps_its_non_ascii_text() -> None:
    @tool
    def get_day_list(days: list[str]) -> list[str]:
        """Choose days."""
        return days

    model = ScriptedModel([call("get_day_list", days=DAYS), "ok"])
    result = await Agent("a", tools=[get_day_list], model=model).run("x")
    content = result.results[0].tool_calls[0].content
    assert content == DAYS_JSON
    assert model.requests[1].history[-1].content == content


async def test_a_persons_response_and_instructions_keep_it_too() -> None:
    @tool(requires_confirmation=True)
    def plan(days: list[str]) -> str:
        """Plan the days (a person approves first)."""
        return "planned"

    def script(request: Any) -> Any:
        return "ok" if request.history[-1].role == "tool" else call("plan", days=DAYS)

    model = ScriptedModel(script)
    planner = Agent("planner", system="Days off: {days}", tools=[plan], model=model)
    network = Network(
        "n",
        agents=[planner],
        router=lambda ctx: (
            planner if ctx.last_result is None or ctx.last_result.tool_calls else None
        ),
    )
    thread = ThreadRef("t", store=MemoryStore())
    stopped = await network.run("plan", thread=thread, state={"days": DAYS})
    assert model.requests[0].system[0].content == f"Days off: {DAYS_JSON}"
    done = await network.run(
        Resume([stopped.interrupts[0].respond({"days": ["星期二"]})]), thread=thread
    )
    assert done.results[-2].tool_calls[0].content == '{"days": ["星期二"]}'
