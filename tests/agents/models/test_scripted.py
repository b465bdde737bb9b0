"""`ScriptedModel`: answers from its script in order, records every request, streams real deltas,
and fails like a provider when it has no answer left."""

from __future__ import annotations

import pytest

from agents import ScriptedModel, call
from agents.models.base import (
    Model,
    ModelChunk,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from network.errors import ModelError
from network.history.messages import AssistantMessage, ToolCall, UserMessage

pytestmark = pytest.mark.anyio


def request(text: str = "hi", agent: str = "writer") -> ModelRequest:
    return ModelRequest(system=[], history=[UserMessage(text)], agent=agent)


async def test_entries_answer_in_order_and_every_request_is_recorded() -> None:
    model = ScriptedModel(["hello", call("note", text="x"), [call("a"), call("b")]])
    assert isinstance(model, Model) and model.remaining == 3
    first = await model.complete(request("one"))
    second = await model.complete(request("two"))
    third = await model.complete(request("three"))
    assert first.message.content == "hello" and first.message.tool_calls == []
    assert [(c.name, c.arguments) for c in second.message.tool_calls] == [("note", {"text": "x"})]
    assert [c.name for c in third.message.tool_calls] == ["a", "b"]
    assert [r.history[-1].content for r in model.requests] == ["one", "two", "three"]
    assert model.remaining == 0


async def test_no_answer_left_is_a_model_error_naming_the_model_and_agent() -> None:
    model = ScriptedModel(["only"], name="tiny")
    await model.complete(request())
    left = r"'tiny' has no answer left for request #2 \(agent 'critic'\)"
    with pytest.raises(ModelError, match=left):
        await model.complete(request(agent="critic"))
    repeating = ScriptedModel(["again"], repeat_last=True)
    answers = [(await repeating.complete(request())).message.content for _ in range(3)]
    assert answers == ["again", "again", "again"]


async def test_an_exception_entry_is_raised_and_a_function_answers_from_the_request() -> None:
    failing = ScriptedModel([ModelError("provider down", model="m")])
    with pytest.raises(ModelError, match="provider down"):
        await failing.complete(request())

    async def echo(req: ModelRequest) -> str:
        return f"you said {req.history[-1].content}"

    assert (await ScriptedModel(echo).complete(request("hey"))).message.content == "you said hey"
    per_entry = ScriptedModel([lambda req: req.agent or ""])
    assert (await per_entry.complete(request(agent="planner"))).message.content == "planner"


async def test_given_messages_and_responses_are_used_as_they_are() -> None:
    response = ModelResponse(message=AssistantMessage("as is"), finish_reason="stop")
    model = ScriptedModel([AssistantMessage("checked"), response])
    assert (await model.complete(request())).message.content == "checked"
    assert await model.complete(request()) is response
    with pytest.raises(Exception, match="tool_calls"):  # a bad message fails when scripted
        ScriptedModel([AssistantMessage(None, [ToolCall("1", None)])])  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="cannot answer with 42"):
        await ScriptedModel([42]).complete(request())


async def test_streaming_sends_reasoning_then_text_then_tool_arguments_in_chunks() -> None:
    chunks: list[ModelChunk] = []

    async def on_chunk(chunk: ModelChunk) -> None:
        chunks.append(chunk)

    thinking = AssistantMessage("answer text", reasoning="let me think")
    model = ScriptedModel([thinking, call("note", text="abcdefgh")], chunk_size=4)
    whole = await model.complete(request(), on_chunk)
    assert whole.message.content == "answer text"
    kinds = [type(chunk) for chunk in chunks]
    assert kinds.index(TextDelta) > max(i for i, k in enumerate(kinds) if k is ReasoningDelta)
    assert "".join(c.text for c in chunks if isinstance(c, TextDelta)) == "answer text"
    assert "".join(c.text for c in chunks if isinstance(c, ReasoningDelta)) == "let me think"

    chunks.clear()
    await model.complete(request(), on_chunk)
    deltas = [c for c in chunks if isinstance(c, ToolCallDelta)]
    assert deltas[0].name == "note"
    assert "".join(d.arguments or "" for d in deltas[1:]) == '{"text": "abcdefgh"}'
    assert all(len(d.arguments or "") <= 4 for d in deltas[1:])


def test_help_documents_the_script_forms_stream_and_chunk_size() -> None:
    import pydoc

    from agents import ScriptedModel as Documented

    text = pydoc.render_doc(Documented, renderer=pydoc.plaintext)
    for needed in (
        "a string: a text answer",
        "call(name, **arguments)",
        "an exception",
        "a callable",
        "stream:",
        "chunk_size:",
        "repeat_last:",
        "structured_output:",
    ):
        assert needed in text, needed


@pytest.mark.parametrize("chunk_size", [0, -1, 2.5, float("nan"), float("inf"), True])
def test_a_chunk_size_that_is_not_a_positive_integer_is_refused_naming_it(
    chunk_size: object,
) -> None:
    from network.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"ScriptedModel\.chunk_size"):
        ScriptedModel(["hi"], chunk_size=chunk_size)  # type: ignore[arg-type]
