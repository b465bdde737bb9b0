"""`@tool`: schemas from signatures and docstrings, argument validation, definition errors."""

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import ConfigurationError, Network, ToolCall, ToolError


def run_once(agent: Agent) -> Network:
    return Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None)


def test_parameter_descriptions_come_from_google_numpy_and_sphinx_docstrings() -> None:
    """As the OpenAI Agents SDK's tests/test_doc_parsing.py::test_auto_detection pins: the
    same descriptions from each style. A NumPy `a: int` line is the parameter and its type,
    not a Google `name: text` (before, the model read "int The first argument.")."""

    @tool
    def google(a: int, b: float) -> str:
        """Add.

        Args:
            a: The first argument.
            b: The second argument.
        """
        return "ok"

    @tool
    def numpy(a: int, b: float, c: str, d: str = "") -> str:
        """Add.

        Parameters
        ----------
        a: int
            The first argument.
        b : float
            The second argument.
        c, d : str
            Two texts,
            joined.

        Returns
        -------
        str
            A result
        """
        return "ok"

    @tool
    def sphinx(a: int, b: float) -> str:
        """Add.

        :param a: The first argument.
        :param b: The second argument.
        :return: A result
        """
        return "ok"

    expected = {"a": "The first argument.", "b": "The second argument."}
    for made in (google, numpy, sphinx):
        function = made.schema["function"]
        assert function["description"] == "Add."
        props = function["parameters"]["properties"]
        assert {name: props[name]["description"] for name in expected} == expected
    texts = numpy.schema["function"]["parameters"]["properties"]
    assert texts["c"]["description"] == texts["d"]["description"] == "Two texts, joined."


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


@pytest.mark.anyio
async def test_an_argument_the_tool_does_not_declare_is_the_models_error_to_fix() -> None:
    # The schema forbids other arguments, as pydantic-ai's and the OpenAI Agents SDK's do: a
    # misspelt optional argument run without would silently take the default.
    paid: list[tuple[float, str]] = []

    @tool(inputs_from_state={"customer": "who"})
    def pay(amount: float, who: str, ctx: ToolContext, note: str = "") -> str:
        """Pay an amount."""
        paid.append((amount, note))
        return "paid"

    assert pay.schema["function"]["parameters"]["additionalProperties"] is False
    model = ScriptedModel(
        [
            [call("pay", amount=3, notes="rent")],  # misspelt: refused, the model told which
            [call("pay", amount=3, note="rent", who="mallory", ctx="x")],  # hidden: ignored
            "done",
        ]
    )
    result = await Agent("a", tools=[pay], model=model).run("x", state={"customer": "ann"})
    refused = result.results[0].tool_calls[0]
    assert refused.is_error and refused.error_type == "ToolError"
    assert "notes: not an argument of this tool (its arguments: amount, note)" in refused.content
    assert result.results[1].tool_calls[0].content == "paid"
    assert paid == [(3.0, "rent")]


@pytest.mark.anyio
async def test_arguments_given_as_json_text_are_read_as_the_object_they_hold() -> None:
    # A `Model` of the application's own may leave `ToolCall.arguments` as the provider's
    # text: before, a JSON object in text was "must be a JSON object, got dict".
    @tool
    def scale(factor: int) -> int:
        """Scale by a factor."""
        return factor * 2

    texts = ['{"factor": 3}', '{"factor": NaN}', "[" * 100_000]
    model = ScriptedModel([[ToolCall(f"c{i}", "scale", text) for i, text in enumerate(texts)]])
    result = await run_once(Agent("a", tools=[scale], model=model)).run("x")
    good, not_finite, too_deep = result.results[0].tool_calls
    assert (good.is_error, good.content) == (False, "6")
    assert "invalid arguments: factor: Input should be a finite number" in not_finite.content
    # nested past Python's stack: not valid JSON, not "raised RecursionError"
    assert "arguments are not valid JSON" in too_deep.content


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
async def test_an_async_function_behind_a_plain_decorator_is_awaited() -> None:
    # before, the sync wrapper's coroutine was the result: the model read "<coroutine object
    # ...>" and the function never ran
    import functools

    import anyio

    def logged(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

        return wrapper

    @tool
    @logged
    async def fetch(x: int) -> str:
        """Fetch a number."""
        await anyio.sleep(0)
        return f"got {x}"

    model = ScriptedModel([call("fetch", x=2), "ok"])
    result = await Agent("a", tools=[fetch], model=model).run("x")
    assert result.results[0].tool_calls[0].content == "got 2"


@pytest.mark.anyio
async def test_models_and_dataclasses_inside_a_result_reach_the_model_as_json() -> None:
    """As pydantic-ai sends a tool's return value (its tests/test_tools.py::
    test_return_pydantic_model, there through pydantic's serializer, so nested too): before,
    a model inside a list reached the model as its `str()`, a dataclass as its repr."""
    import dataclasses
    import datetime
    import json

    class Doc(BaseModel):
        title: str
        published: datetime.date

    @dataclasses.dataclass
    class Hit:
        doc: Doc
        score: float

    @tool
    def search(query: str) -> list[Doc]:
        """Search the documents."""
        return [Doc(title=query, published=datetime.date(2024, 1, 2))]

    @tool
    def best(query: str) -> Hit:
        """The best hit."""
        return Hit(Doc(title=query, published=datetime.date(2024, 1, 3)), 0.5)

    model = ScriptedModel([[call("search", query="a"), call("best", query="b")], "ok"])
    result = await Agent("a", tools=[search, best], model=model).run("x")
    found, top = (record.content for record in result.results[0].tool_calls)
    assert json.loads(found) == [{"title": "a", "published": "2024-01-02"}]
    assert json.loads(top) == {"doc": {"title": "b", "published": "2024-01-03"}, "score": 0.5}
    assert model.requests[1].history[-1].content == top  # what the model read


@pytest.mark.anyio
async def test_bytes_reach_the_model_as_their_text_or_as_base64() -> None:
    """Before, `b"..."` reached the model as its quoted repr (`"b'h\\xc3\\xa9llo'"`), and
    bytes that are not UTF-8 failed the commit of a run on a thread with pydantic's
    "invalid utf-8 sequence". Now UTF-8 is text, anything else `{"base64": ...}`, wherever
    it sits, and the thread keeps what the model read."""
    import json

    from network import ThreadRef
    from network.threads import MemoryStore

    @tool
    def read() -> bytes:
        """Read the note."""
        return "héllo".encode()

    @tool
    def image() -> bytes:
        """The image."""
        return b"\x89PNG\xff\x00"

    @tool
    def parts() -> dict[str, Any]:
        """Both."""
        return {"text": bytearray(b"ok"), "raw": [memoryview(b"\xff")]}

    # `parts` in an agent call of its own: nothing else there sends its record to be mended
    model = ScriptedModel([[call("read"), call("image")], call("parts"), "ok", "again"])
    agent = Agent("a", tools=[read, image, parts], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 3 else None)
    store = MemoryStore()
    result = await network.run("x", thread=ThreadRef("t", store=store))
    calls = [record for each in result.results for record in each.tool_calls]
    text, data, nested = (record.content for record in calls)
    assert text == "héllo"
    assert json.loads(data) == {"base64": "iVBOR/8A"}
    assert json.loads(nested) == {"text": "ok", "raw": [{"base64": "/w=="}]}
    assert [m.content for m in model.requests[1].history[-2:]] == [text, data]
    assert model.requests[2].history[-1].content == nested
    thread = await store.get_thread("t")
    assert thread is not None
    stored = [record.result for each in thread.results for record in each.tool_calls]
    assert stored == ["héllo", {"base64": "iVBOR/8A"}, {"text": "ok", "raw": [{"base64": "/w=="}]}]
    again = await run_once(agent).run("y", thread=ThreadRef("t", store=store))
    assert again.output == "again"  # the thread's records read back


def test_a_generator_function_is_refused_when_the_tool_is_defined() -> None:
    # before, the model read "<generator object ...>" and the body never ran
    def pages() -> Any:
        """List the pages."""
        yield "one"

    async def live_pages() -> Any:
        """List the pages as they come."""
        yield "one"

    for function in (pages, live_pages):
        with pytest.raises(ConfigurationError, match=f"'{function.__name__}' is a generator"):
            tool(function)


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


@pytest.mark.parametrize("description", [5, ["Look up"], b"Look up"])
def test_a_description_that_is_not_text_is_refused_when_the_tool_is_defined(
    description: object,
) -> None:
    # before: sent as given in the tool's schema, which a provider refuses on every request
    # (HTTP 400: "Invalid type for 'tools[0].function.description'")
    def lookup(query: str) -> str:
        """Look up."""
        return query

    with pytest.raises(ConfigurationError, match=r"tool 'lookup': description must be text"):
        tool(description=description)(lookup)  # type: ignore[arg-type]
