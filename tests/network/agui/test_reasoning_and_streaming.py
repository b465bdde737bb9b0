"""Over AG-UI: a reasoning model's thinking as REASONING_* events, a client's reasoning messages
kept, and streaming turned off per agent or per model (the text then arrives as one delta).

The server runs in-process (ASGI), the model is the fake OpenAI server on 127.0.0.1 through
the native client, or a `ScriptedModel`.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, OpenAIModel, ScriptedModel
from network import AssistantMessage, Network
from network.agui import app
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.network.agui.test_server import Client, body

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

REASONING = ("REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT")


def of(run: Any, *kinds: str) -> list[dict[str, Any]]:
    return [event for event in run.events if event["type"] in kinds]


def check_reasoning_block(run: Any) -> str:
    """The reasoning events form one well-paired block before the answer; its text."""
    kinds = [e["type"] for e in run.events if e["type"].startswith("REASONING")]
    assert kinds[:2] == ["REASONING_START", "REASONING_MESSAGE_START"]
    assert kinds[-2:] == ["REASONING_MESSAGE_END", "REASONING_END"]
    assert set(kinds[2:-2]) == {"REASONING_MESSAGE_CONTENT"}
    ids = {e["messageId"] for e in of(run, *REASONING, "REASONING_MESSAGE_END", "REASONING_END")}
    (reasoning_id,) = ids
    start = of(run, "REASONING_MESSAGE_START")[0]
    assert start["role"] == "reasoning"
    text_start = of(run, "TEXT_MESSAGE_START")[0]
    assert text_start["messageId"] != reasoning_id  # a message of its own
    types = run.types
    assert types.index("REASONING_END") < types.index("TEXT_MESSAGE_START")
    assert "THINKING_START" not in types  # AG-UI 1.0: reasoning replaced thinking
    return "".join(e["delta"] for e in of(run, "REASONING_MESSAGE_CONTENT"))


async def test_a_reasoning_model_streams_its_thinking_as_reasoning_events(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add(Reply(text="Four.", reasoning="Two plus two is four."))
    model = OpenAIModel("openai/fake", api_base=openai_server.base_url, max_retries=0)
    client = Client(app(Network("n", agents=[Agent("thinker", model=model)])))
    run = await client.run(body("t", "r"))
    assert len(of(run, "REASONING_MESSAGE_CONTENT")) > 1  # as it streamed
    assert check_reasoning_block(run) == "Two plus two is four."
    text = "".join(e["delta"] for e in of(run, "TEXT_MESSAGE_CONTENT"))
    assert text == "Four."


async def test_reasoning_of_an_answer_that_did_not_stream_is_sent_whole() -> None:
    answer = AssistantMessage("Four.", reasoning="Two plus two is four.")
    model = ScriptedModel([answer])
    client = Client(app(Network("n", agents=[Agent("thinker", model=model, stream=False)])))
    run = await client.run(body("t", "r"))
    assert len(of(run, "REASONING_MESSAGE_CONTENT")) == 1
    assert check_reasoning_block(run) == "Two plus two is four."


async def test_a_clients_reasoning_messages_are_kept_not_dropped() -> None:
    model = ScriptedModel(lambda request: "ok")
    client = Client(app(Network("n", agents=[Agent("a", model=model)])))
    messages = [
        {"id": "1", "role": "user", "content": "2+2?"},
        {"id": "2", "role": "reasoning", "content": "Two plus two."},
        {"id": "3", "role": "assistant", "content": "Four."},
        {"id": "4", "role": "user", "content": "And 3+3?"},
        {"id": "5", "role": "reasoning", "content": "A thought whose answer never came."},
    ]
    await client.run({"threadId": "t", "runId": "r", "messages": messages})
    (request,) = model.requests
    answers = [m for m in request.history if isinstance(m, AssistantMessage)]
    assert answers[0].content == "Four." and answers[0].reasoning is not None
    assert "Two plus two." in answers[0].reasoning
    # the trailing one, with no answer after it, joins the last answer
    assert "never came" in answers[0].reasoning


async def test_a_lone_reasoning_message_is_kept_and_never_sent() -> None:
    model = ScriptedModel(lambda request: "ok")
    client = Client(app(Network("n", agents=[Agent("a", model=model)])))
    messages = [
        {"id": "1", "role": "reasoning", "content": "Thinking about nothing yet."},
        {"id": "2", "role": "user", "content": "hello"},
    ]
    await client.run({"threadId": "t", "runId": "r", "messages": messages})
    (request,) = model.requests
    kept = [m for m in request.history if isinstance(m, AssistantMessage)]
    assert [m.reasoning for m in kept] == ["Thinking about nothing yet."]


@pytest.mark.parametrize("where", ["agent", "model"])
async def test_streaming_turned_off_sends_a_plain_request_and_one_delta(
    openai_server: FakeOpenAIServer, where: str
) -> None:
    text = "A fairly long answer that a streaming server would send in many pieces."
    openai_server.add(Reply(text=text))
    options = {"stream": False} if where == "model" else {}
    model = OpenAIModel("openai/fake", api_base=openai_server.base_url, max_retries=0, **options)
    agent = Agent("plain", model=model, stream=where != "agent")
    client = Client(app(Network("n", agents=[agent])))
    run = await client.run(body("t", "r"))
    (request,) = openai_server.requests
    assert "stream" not in request and "stream_options" not in request  # a plain request
    (delta,) = of(run, "TEXT_MESSAGE_CONTENT")  # the text as one delta
    assert delta["delta"] == text


async def test_streaming_stays_on_by_default_under_agui(openai_server: FakeOpenAIServer) -> None:
    openai_server.add(Reply(text="A fairly long answer in many pieces."))
    model = OpenAIModel("openai/fake", api_base=openai_server.base_url, max_retries=0)
    run = await Client(app(Network("n", agents=[Agent("a", model=model)]))).run(body("t", "r"))
    assert openai_server.requests[0]["stream"] is True
    assert len(of(run, "TEXT_MESSAGE_CONTENT")) > 1


def test_stream_must_be_a_bool() -> None:
    from network import ConfigurationError

    with pytest.raises(ConfigurationError, match="stream"):
        Agent("a", stream="no")  # type: ignore[arg-type]
