"""`@tool`: schemas from signatures and docstrings, argument validation, definition errors."""

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import ConfigurationError, Network, ToolError


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


def test_tool_definition_errors() -> None:
    with pytest.raises(ConfigurationError, match="kwargs"):
        tool(lambda **kwargs: None)
    with pytest.raises(ConfigurationError, match="'quiet': private_errors must be True or False"):

        @tool(private_errors="yes")  # type: ignore[arg-type]
        def quiet() -> str:
            return "x"

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


@pytest.mark.parametrize("source", [3, "", ["a"]])
def test_an_output_mapping_whose_source_is_not_a_field_name_is_refused(source: object) -> None:
    from network import ConfigurationError

    def lookup() -> dict[str, int]:
        """Look up."""
        return {"a": 1}

    with pytest.raises(ConfigurationError, match=r"outputs_to_state\['k'\] source"):
        tool(lookup, outputs_to_state={"k": {"source": source}})


def _search(query: str, repository: str = "docs") -> dict[str, Any]:
    """Search."""
    return {"hits": [query]}


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"outputs_to_state": {"documents": "hits"}}, "outputs_to_state['documents']"),
        ({"outputs_to_state": {"documents": None}}, "outputs_to_state['documents']"),
        ({"outputs_to_state": ["documents"]}, "outputs_to_state"),
        ({"outputs_to_state": {"": {"source": "hits"}}}, "state key ''"),
        ({"outputs_to_state": {"documents": {"source": 5}}}, "outputs_to_state['documents']"),
        ({"outputs_to_state": {"documents": {"handler": 5}}}, "outputs_to_state['documents']"),
        ({"outputs_to_state": {"documents": {"sorce": "hits"}}}, "'sorce'"),
        ({"inputs_from_state": ["repository"]}, "inputs_from_state"),
        ({"inputs_from_state": {"repo": 5}}, "inputs_from_state['repo']"),
        ({"inputs_from_state": {"repo": ["repository"]}}, "inputs_from_state['repo']"),
        ({"inputs_from_state": {"repo": "nope"}}, "'nope'"),
        ({"inputs_from_state": {"a": "repository", "b": "repository"}}, "'repository'"),
        ({"inputs_from_state": {"messages": "repository"}}, "ctx.state.messages"),
        ({"inputs_from_state": {"last_message": "repository"}}, "conversation's name"),
        ({"inputs_from_state": {"repo\ud800": "repository"}}, "lone surrogate"),
        ({"outputs_to_state": {"hits\x00": {"source": "hits"}}}, "NUL"),
    ],
    ids=[
        "mapping not a dict",
        "mapping None",
        "outputs a list",
        "empty key",
        "source not a string",
        "handler not callable",
        "unknown field",
        "inputs a list",
        "parameter not a string",
        "parameter a list",
        "unknown parameter",
        "one parameter from two keys",
        "input from the conversation",
        "input from the last message",
        "input key with a lone surrogate",
        "output key with NUL",
    ],
)
def test_state_mappings_that_cannot_work_are_refused_when_the_tool_is_defined(
    options: dict[str, Any], named: str
) -> None:
    # Haystack checks its Tool's mappings when the tool is made; ours are refused there too,
    # as a ConfigurationError naming the tool and the entry, never a bare ValueError/TypeError
    # from deep inside, nor a mapping that silently never writes. A parameter filled from
    # Haystack's `messages` (or a key no store can keep, which never has a value) got its
    # default, silently, at every call.
    with pytest.raises(ConfigurationError) as caught:
        tool(**options)(_search)
    assert "'_search'" in str(caught.value)
    assert named in str(caught.value)


@pytest.mark.parametrize(
    "option", ["requires_confirmation", "blocking", "isolated", "idempotent", "private_errors"]
)
@pytest.mark.parametrize("value", ["no", 0.5, None, 1])
def test_a_tools_switches_are_bools(option: str, value: object) -> None:
    """`@tool(requires_confirmation=...)` is LangGraph's `interrupt()`, ADK's tool confirmation
    and the Agents SDK's `needs_approval` (docs/coming-from-*.md): `requires_confirmation="no"`
    made the tool wait for a person, and `idempotent="no"` let a retry repeat its side
    effects, by being truthy. Each switch is True or False, else refused naming it."""

    def lookup(query: str) -> str:
        """Look something up."""
        return query

    with pytest.raises(ConfigurationError, match=rf"tool 'lookup': {option} must be True or"):
        tool(**{option: value})(lookup)


@pytest.mark.parametrize("name", ["bad name!", "", "x" * 65, "web.search", 3])
def test_a_tool_name_providers_refuse_is_refused_when_the_tool_is_defined(name: object) -> None:
    """`@tool(name="bad name!")` was accepted, and refused by the provider (a 400) at the
    run's first request: the rule `handoff(tool_name=...)` and AG-UI client tools keep."""

    def lookup(query: str) -> str:
        """Look it up."""
        return query

    with pytest.raises(ConfigurationError, match=r"tool of function 'lookup': name .* must be 1"):
        tool(name=name)(lookup)  # type: ignore[arg-type]
    assert tool(name="look-up_2")(lookup).name == "look-up_2"
