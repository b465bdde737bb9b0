"""Tools: schemas from signatures, validation, injection, errors, concurrency and order."""

from typing import Annotated

import anyio
import pytest
from pydantic import BaseModel, Field

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import ConfigurationError, Network, State, ToolError


def run_once(agent: Agent) -> Network:
    return Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None)


def test_schema_comes_from_signature_docstring_and_annotations() -> None:
    @tool
    def search(
        query: Annotated[str, "what to look for"],
        limit: Annotated[int, Field(description="how many results", ge=1)] = 5,
        exact: bool = False,
        ctx: ToolContext | None = None,
    ) -> list[str]:
        """Search the knowledge base.

        Args:
            exact: match the whole phrase only
        """
        return []

    function = search.schema["function"]
    assert function["name"] == "search"
    assert function["description"] == "Search the knowledge base."
    props = function["parameters"]["properties"]
    assert props["query"] == {"type": "string", "description": "what to look for"}
    assert props["limit"]["description"] == "how many results"
    assert props["limit"]["minimum"] == 1 and props["limit"]["default"] == 5
    assert props["exact"]["description"] == "match the whole phrase only"
    assert function["parameters"]["required"] == ["query"]
    assert "ctx" not in props


@pytest.mark.anyio
async def test_schema_is_built_once_and_reused_by_every_request() -> None:
    @tool
    def ping() -> str:
        return "pong"

    model = ScriptedModel([call("ping"), call("ping")])
    agent = Agent("a", tools=[ping], model=model)
    await Network(
        "n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None
    ).run("x")
    assert model.requests[0].tools[0] is model.requests[1].tools[0] is ping.schema


@pytest.mark.anyio
async def test_arguments_are_validated_and_coerced_before_the_handler_runs() -> None:
    received = []

    @tool
    def scale(factor: int) -> int:
        received.append(factor)
        return factor * 2

    model = ScriptedModel([[call("scale", factor="3"), call("scale", factor="three")]])
    result = await run_once(Agent("a", tools=[scale], model=model)).run("x")
    good, bad = result.results[0].tool_calls
    assert received == [3]
    assert (good.is_error, good.content) == (False, "6")
    assert bad.is_error and "invalid arguments" in bad.content and "factor" in bad.content


class Node(BaseModel):
    name: str
    children: list["Node"] = []


def test_model_and_recursive_arguments_are_validated_into_their_models() -> None:
    # A recursive model puts shared definitions in the arguments schema: another validator path.
    @tool
    def count(tree: Node, depth: int = 1) -> int:
        return depth

    arguments = count.validate({"tree": {"name": "a", "children": [{"name": "b"}]}})
    assert arguments == {"tree": Node(name="a", children=[Node(name="b")]), "depth": 1}
    with pytest.raises(ToolError, match="tree.children.0.name: Field required"):
        count.validate({"tree": {"name": "a", "children": [{}]}})


@pytest.mark.anyio
async def test_unknown_tools_and_raising_handlers_become_errors_the_model_sees() -> None:
    @tool
    def sync_fail() -> str:
        raise RuntimeError("sync broke")

    @tool
    async def async_fail() -> str:
        raise RuntimeError("async broke")

    model = ScriptedModel([[call("nope"), call("sync_fail"), call("async_fail")], "recovered"])
    agent = Agent("a", tools=[sync_fail, async_fail], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    result = await network.run("x")
    unknown, sync_error, async_error = result.results[0].tool_calls
    assert unknown.is_error and "unknown tool 'nope'" in unknown.content
    assert sync_error.is_error and "sync broke" in sync_error.content
    assert async_error.is_error and "async broke" in async_error.content
    tool_messages = [m for m in model.requests[1].history if m.role == "tool"]
    assert [m.is_error for m in tool_messages] == [True, True, True]
    assert result.output == "recovered"  # the run went on


@pytest.mark.anyio
async def test_invalid_json_arguments_are_reported_to_the_model() -> None:
    from network import AssistantMessage, ToolCall

    @tool
    def echo(text: str) -> str:
        return text

    broken = AssistantMessage(tool_calls=[ToolCall(id="c1", name="echo", arguments='{"text": ')])
    result = await run_once(Agent("a", tools=[echo], model=ScriptedModel([broken]))).run("x")
    record = result.results[0].tool_calls[0]
    assert record.is_error and "not valid JSON" in record.content


@pytest.mark.anyio
async def test_json_arguments_that_are_not_an_object_are_reported_as_such() -> None:
    from network import AssistantMessage, ToolCall

    @tool
    def echo(text: str) -> str:
        return text

    listed = AssistantMessage(tool_calls=[ToolCall(id="c1", name="echo", arguments='["hi"]')])
    result = await run_once(Agent("a", tools=[echo], model=ScriptedModel([listed]))).run("x")
    record = result.results[0].tool_calls[0]
    # valid JSON, so the model is told what is wrong with it, not that it is not JSON
    assert record.is_error and "not valid JSON" not in record.content
    assert "tool 'echo': arguments must be a JSON object, got a JSON array" in record.content


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
async def test_concurrent_calls_record_results_and_writes_in_model_order() -> None:
    started = []

    @tool
    async def slow_append(item: str, delay: float, state: State) -> str:
        started.append(item)
        await anyio.sleep(delay)
        state.kv.set("log", [item])
        state.kv.set("last", item)
        return item

    model = ScriptedModel(
        [
            [
                call("slow_append", item="first", delay=0.05),
                call("slow_append", item="second", delay=0),
            ]
        ]
    )
    agent = Agent("a", tools=[slow_append], model=model)
    schema = {"log": {"type": list[str]}, "last": {"type": str}}
    result = await Network(
        "n",
        agents=[agent],
        router=lambda c: agent if c.call_count == 0 else None,
        state_schema=schema,
    ).run("x")
    assert sorted(started) == ["first", "second"]
    assert [r.result for r in result.results[0].tool_calls] == ["first", "second"]
    assert result["log"] == ["first", "second"]  # model order, though "second" finished first
    assert result["last"] == "second"


@pytest.mark.anyio
async def test_concurrent_calls_really_overlap() -> None:
    log = []

    @tool
    async def nap(n: int) -> str:
        log.append(("start", n))
        await anyio.sleep(0.05)
        log.append(("end", n))
        return "z"

    agent = Agent("a", tools=[nap], model=ScriptedModel([[call("nap", n=n) for n in range(5)]]))
    await run_once(agent).run("x")
    # every call started before any finished: they ran at once, not one after another
    assert [kind for kind, _ in log] == ["start"] * 5 + ["end"] * 5


@pytest.mark.anyio
async def test_a_tool_that_raises_leaves_none_of_its_writes() -> None:
    @tool
    def half_done(ctx: ToolContext) -> str:
        ctx.kv.set("a", 1)
        ctx.kv.set("b", 2)
        raise RuntimeError("halfway")

    @tool
    def fine(ctx: ToolContext) -> str:
        ctx.kv.set("c", 3)
        return "ok"

    single = Agent("single", tools=[half_done], model=ScriptedModel([call("half_done")]))
    result = await run_once(single).run("x", state={"a": 0})
    assert result.state.kv.data == {"a": 0}
    assert result.results[0].state_delta == []

    pair = Agent(
        "pair", tools=[half_done, fine], model=ScriptedModel([[call("half_done"), call("fine")]])
    )
    result = await run_once(pair).run("x", state={"a": 0})
    assert result.state.kv.data == {"a": 0, "c": 3}


@pytest.mark.anyio
async def test_blocking_sync_tools_run_in_a_worker_thread() -> None:
    import threading

    threads = []

    @tool(blocking=True)
    def blocking() -> str:
        threads.append(threading.current_thread() is threading.main_thread())
        return "done"

    await run_once(Agent("a", tools=[blocking], model=ScriptedModel([call("blocking")]))).run("x")
    assert threads == [False]


def test_tool_definition_errors() -> None:
    with pytest.raises(ConfigurationError, match="kwargs"):
        tool(lambda **kwargs: None)
    with pytest.raises(ConfigurationError, match="'missing'"):

        @tool(inputs_from_state={"doc": "missing"})
        def summarize(text: str) -> str:
            return text


@pytest.mark.anyio
async def test_a_tuple_appends_its_items_alone_or_in_a_batch() -> None:
    @tool
    def add_pair(ctx: ToolContext) -> str:
        ctx.kv.set("nums", (1, 2))
        return "ok"

    schema = {"nums": {"type": list[int]}}
    alone = Agent("a", tools=[add_pair], model=ScriptedModel([call("add_pair")]))
    batch = Agent(
        "b", tools=[add_pair], model=ScriptedModel([[call("add_pair"), call("add_pair")]])
    )
    first = await Network("n", agents=[alone], state_schema=schema).run("x")
    second = await Network("n", agents=[batch], state_schema=schema).run("x")
    assert first["nums"] == [1, 2]
    assert second["nums"] == [1, 2, 1, 2]
