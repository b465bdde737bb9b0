"""`ToolContext`: injected into a tool that asks for it, hidden from the schema the model sees."""

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network


def run_once(agent: Agent) -> Network:
    return Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None)


@pytest.mark.anyio
async def test_tool_context_is_injected_and_hidden_from_the_schema() -> None:
    seen = {}

    @tool
    def inspect_run(note: str, ctx: ToolContext) -> str:
        seen.update(agent=ctx.agent.name, network=ctx.network.name, call_id=ctx.tool_call_id)
        ctx.kv.set("note", note)
        return "ok"

    assert list(inspect_run.schema["function"]["parameters"]["properties"]) == ["note"]
    agent = Agent("a", tools=[inspect_run], model=ScriptedModel([call("inspect_run", note="hi")]))
    result = await run_once(agent).run("x")
    assert seen == {"agent": "a", "network": "n", "call_id": result.results[0].tool_calls[0].id}
    assert result["note"] == "hi"
