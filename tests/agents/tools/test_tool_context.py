"""`ToolContext`: injected into a tool that asks for it, hidden from the schema the model sees."""

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, RunContext


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


@pytest.mark.anyio
async def test_a_tool_that_reads_nothing_of_the_run_gets_no_context_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A plain sync tool with no ToolContext or State parameter, no inputs from state and no
    # outputs to state is called without a ToolContext: one object fewer per call. The tools
    # that read the run still get theirs.
    import agents.tools._dispatch as dispatch

    built: list[ToolContext] = []

    class CountedContext(ToolContext):  # type: ignore[type-arg]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            built.append(self)

    monkeypatch.setattr(dispatch, "ToolContext", CountedContext)

    @tool
    def double(x: int) -> int:
        return 2 * x

    @tool
    def note(text: str, ctx: ToolContext) -> str:
        ctx.kv.set("note", text)
        return "ok"

    @tool(outputs_to_state={"doubled": {}})
    def double_into_state(x: int) -> dict[str, int]:
        return {"value": 2 * x}

    assert not double.reads_run and note.reads_run and double_into_state.reads_run
    script = [call("double", x=2), call("note", text="hi"), call("double_into_state", x=3)]
    agent = Agent(
        "a", tools=[double, note, double_into_state], model=ScriptedModel([*script, "done"])
    )

    def until_done(ctx: RunContext) -> Agent | None:
        return agent if ctx.last_result is None or ctx.last_result.tool_calls else None

    result = await Network("n", agents=[agent], router=until_done).run("x")
    assert [r.tool_calls[0].content for r in result.results[:2]] == ["4", "ok"]
    assert result["note"] == "hi" and result["doubled"] == {"value": 6}
    assert len(built) == 2  # `note`'s and `double_into_state`'s; none for `double`
