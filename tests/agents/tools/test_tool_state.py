"""Tools wired to state: inputs_from_state, outputs_to_state, State injection, rollback."""

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call, tool
from network import ConfigurationError, Network, State, StateValidationError, merge_lists


def run_once(agent: Agent, **kwargs: Any) -> Network:
    return Network(
        "n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None, **kwargs
    )


@pytest.mark.anyio
async def test_inputs_from_state_are_hidden_and_win_over_the_model() -> None:
    seen = []

    @tool(inputs_from_state={"documents": "docs"})
    def count(docs: list[str], prefix: str) -> str:
        seen.append(docs)
        return f"{prefix}{len(docs)}"

    assert list(count.schema["function"]["parameters"]["properties"]) == ["prefix"]
    model = ScriptedModel([call("count", prefix="n=", docs=["forged"])])
    result = await run_once(Agent("a", tools=[count], model=model)).run(
        "x", state={"documents": ["a", "b"]}
    )
    assert seen == [["a", "b"]]
    assert result.results[0].tool_calls[0].content == "n=2"


@pytest.mark.anyio
async def test_outputs_to_state_sources_whole_results_missing_sources_and_non_dicts() -> None:
    @tool(
        outputs_to_state={
            "docs": {"source": "documents"},
            "last": {},
            "missing": {"source": "nope"},
            "tags": {"source": "tag", "handler": merge_lists},
        }
    )
    def fetch(tag: str) -> dict[str, Any]:
        return {"documents": [tag.upper()], "tag": tag}

    @tool(outputs_to_state={"never": {}})
    def plain() -> str:
        return "not a dict"

    model = ScriptedModel([[call("fetch", tag="a"), call("fetch", tag="b"), call("plain")]])
    result = await run_once(
        Agent("a", tools=[fetch, plain], model=model),
        state_schema={"docs": {"type": list[str]}},
    ).run("x")
    assert result["docs"] == ["A", "B"]  # list type: merge_lists, in model order
    assert result["last"] == {"documents": ["B"], "tag": "b"}
    assert result["tags"] == ["a", "b"]
    assert "missing" not in result and "never" not in result


@pytest.mark.anyio
async def test_a_state_parameter_receives_the_state_and_is_hidden() -> None:
    @tool
    def remember(fact: str, state: State) -> str:
        state.kv.set("facts", [fact])
        return f"{len(state.kv.get('facts'))} facts"

    assert list(remember.schema["function"]["parameters"]["properties"]) == ["fact"]
    model = ScriptedModel([call("remember", fact="sky is blue")])
    result = await run_once(
        Agent("a", tools=[remember], model=model), state_schema={"facts": {"type": list[str]}}
    ).run("x", state={"facts": ["water is wet"]})
    assert result["facts"] == ["water is wet", "sky is blue"]
    assert result.results[0].tool_calls[0].content == "2 facts"


@pytest.mark.anyio
async def test_a_failing_output_write_is_that_tools_error_and_other_writes_stand() -> None:
    @tool(outputs_to_state={"score": {"source": "score"}})
    def grade(score: Any) -> dict[str, Any]:
        return {"score": score}

    @tool(outputs_to_state={"notes": {}})
    def note(text: str) -> str | dict:
        return {"text": text}

    model = ScriptedModel(
        [[call("grade", score="high"), call("note", text="kept"), call("grade", score=3)]]
    )
    result = await run_once(
        Agent("a", tools=[grade, note], model=model),
        state_schema={"score": {"type": int}},
    ).run("x", state={"score": 1})
    bad, good, fine = result.results[0].tool_calls
    assert bad.is_error and "'score'" in bad.content
    assert not good.is_error and not fine.is_error
    assert result["notes"] == {"text": "kept"}
    assert result["score"] == 3


@pytest.mark.anyio
async def test_a_merge_that_fails_only_against_the_run_is_reported_and_undone() -> None:
    from typing import Annotated

    from annotated_types import MaxLen

    @tool(outputs_to_state={"top2": {"source": "items"}, "seen": {"source": "items"}})
    def add(items: list[int]) -> dict[str, Any]:
        return {"items": items}

    schema = {"top2": {"type": Annotated[list[int], MaxLen(2)]}, "seen": {"type": list[int]}}
    model = ScriptedModel(
        [[call("add", items=[1]), call("add", items=[2]), call("add", items=[3])]]
    )
    result = await run_once(Agent("a", tools=[add], model=model), state_schema=schema).run("x")
    first, second, third = result.results[0].tool_calls
    assert not first.is_error and not second.is_error
    assert third.is_error and "top2" in third.content  # each alone fits; the third overflows
    assert result["top2"] == [1, 2]
    assert result["seen"] == [1, 2]  # the failing call's other write was undone too


@pytest.mark.anyio
async def test_output_key_goes_through_the_schema() -> None:
    agent = Agent("a", model=ScriptedModel(["42"]), output_key="answer")
    result = await run_once(agent, state_schema={"answer": {"type": int}}).run("x")
    assert result["answer"] == 42
    bad = Agent("b", model=ScriptedModel(["many"]), output_key="answer")
    with pytest.raises(StateValidationError, match="'answer'"):
        await run_once(bad, state_schema={"answer": {"type": int}}).run("x")


@pytest.mark.anyio
async def test_the_result_reads_like_a_dict_of_state_keys() -> None:
    agent = Agent("a", model=ScriptedModel(["final words"]), output_key="summary")
    result = await run_once(agent).run("question", state={"documents": ["d1"]})
    assert result["documents"] == ["d1"]
    assert result["summary"] == "final words"
    assert [m.role for m in result["messages"]] == ["user", "assistant"]
    assert result["last_message"].content == "final words"
    assert result["last_message"].name == "a"
    assert list(result.state.messages) == result["messages"]
    assert "documents" in result and "absent" not in result
    assert set(result.keys()) == {"documents", "summary", "messages", "last_message"}
    with pytest.raises(KeyError):
        result["absent"]


@pytest.mark.anyio
async def test_a_state_input_whose_key_is_absent_takes_the_default_or_is_an_error_result() -> None:
    @tool(inputs_from_state={"loc": "location", "unit": "unit"})
    def weather(location: str, unit: str = "C") -> str:
        return f"{location} 20{unit}"

    assert list(weather.schema["function"]["parameters"]["properties"]) == []
    # what the model sends for a parameter filled from state is never used, even when the
    # key is absent (Haystack would use it then)
    model = ScriptedModel(lambda request: call("weather", location="Paris"))
    network = run_once(Agent("a", tools=[weather], model=model))
    missing = (await network.run("x")).results[0].tool_calls[0]
    assert missing.is_error and "'location'" in missing.content and "'loc'" in missing.content
    found = (await network.run("x", state={"loc": "Oslo"})).results[0].tool_calls[0]
    assert found.content == "Oslo 20C"


@pytest.mark.anyio
async def test_the_tools_of_one_answer_read_the_state_the_model_answered_from() -> None:
    # Haystack orders such calls by what they read and write, so there the second search sees
    # the first's document and the reader the writer's value; here the calls of one answer
    # run together on the state as it was, and their writes land in the model's order.
    @tool(
        inputs_from_state={"documents": "documents"},
        outputs_to_state={"documents": {"source": "documents"}},
    )
    def search(documents: list[str]) -> dict[str, Any]:
        return {"documents": [f"doc-{len(documents)}"]}

    @tool(inputs_from_state={"value": "value"})
    def reader(value: str) -> str:
        return f"saw {value}"

    @tool(outputs_to_state={"value": {"source": "value"}})
    def writer() -> dict[str, Any]:
        return {"value": "written"}

    answers = [[call("search"), call("search")], [call("reader"), call("writer")]]
    agent = Agent("a", tools=[search, reader, writer], model=ScriptedModel(answers))
    network = Network(
        "n",
        agents=[agent],
        router=lambda ctx: agent if ctx.call_count < 2 else None,
        state_schema={"documents": {"type": list[str]}, "value": {"type": str}},
    )
    result = await network.run("x", state={"documents": [], "value": "before"})
    assert result["documents"] == ["doc-0", "doc-0"]
    assert result.results[1].tool_calls[0].content == "saw before"
    assert result["value"] == "written"


@pytest.mark.anyio
async def test_a_tool_reads_the_conversation_before_the_answer_that_called_it() -> None:
    @tool
    def roles(state: State) -> str:
        return ",".join(m.role for m in state.messages)

    agent = Agent("a", tools=[roles], model=ScriptedModel([call("roles"), call("roles")]))
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    result = await network.run("hi")
    assert [r.tool_calls[0].content for r in result.results] == [
        "user",
        "user,assistant,tool",  # the first call's answer and result, not the second's answer
    ]


@pytest.mark.parametrize("key", ["messages", "last_message"])
def test_an_output_mapped_to_the_conversations_name_is_refused_when_the_tool_is_made(
    key: str,
) -> None:
    """Haystack keeps its conversation in a `messages` key; here neither it nor `last_message`
    is a key, so a mapping to one is a mapping that cannot work, refused when the tool is
    defined (docs/coming-from-haystack.md), not an error result at every call."""
    with pytest.raises(ConfigurationError, match=rf"outputs_to_state\['{key}'\]: state key"):

        @tool(outputs_to_state={key: {"source": "hits"}})
        def search(query: str) -> dict[str, Any]:
            """Search."""
            return {"hits": [query]}
