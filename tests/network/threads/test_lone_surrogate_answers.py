"""Model output is hostile input: an answer, tool-call arguments or a tool's result holding a
lone surrogate (`"\\ud800"`, which a custom `Model` or a script may hand the run) is committed
to every store (memory, SQLite, PostgreSQL) with U+FFFD in its place, as the model clients mend
what a server sends (`network.utf8`); the run goes on, and the thread reads back. Before, the
commit failed with pydantic's PydanticSerializationError, after the model was paid."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agents import Agent, ScriptedModel, tool
from agents.models.scripted import call
from network import Network, ThreadRef
from network.history.messages import AssistantMessage, ToolCall, ToolMessage
from network.threads import ThreadStore
from network.threads.codec import encode_message
from network.threads.thread_data import encode_value

pytestmark = pytest.mark.anyio


@tool
def echo(text: str) -> str:
    """Say `text` back."""
    return text


def network(model: ScriptedModel) -> Network:
    agent = Agent(name="talker", model=model, tools=[echo], output_key="said")
    return Network(name="lone", agents=[agent], max_iter=1)


async def test_a_lone_surrogate_from_the_model_is_stored_as_a_replacement_character(
    open_store: Callable[[], ThreadStore],
) -> None:
    model = ScriptedModel([call("echo", text="x\udc00y"), "bad \ud800 text", "fine"])
    runs = network(model)
    first = await runs.run("hi", thread=ThreadRef("t", store=open_store()))
    assert first.stop_reason == "router_finished"
    second = await runs.run("again", thread=ThreadRef("t", store=open_store()))
    assert second.output == "bad \ud800 text"  # the run's own answer, as the model gave it
    # `output_key` keeps it as stores can (a tool's own write of such text is refused)
    assert second.state.kv.get("said") == "bad \ufffd text"

    third = await runs.run("more", thread=ThreadRef("t", store=open_store()))
    assert third.output == "fine"
    thread = await open_store().get_thread("t")
    assert thread is not None and thread.revision == 3
    asked, answered = thread.messages[1], thread.messages[2]
    assert isinstance(asked, AssistantMessage) and isinstance(answered, ToolMessage)
    assert asked.tool_calls[0].arguments == {"text": "x\ufffdy"}
    assert answered.content == "x\ufffdy"
    assert thread.messages[4].content == "bad \ufffd text"
    assert thread.state["said"] == "fine"
    results = await open_store().get_results("t")
    assert results[1].output[-1].content == "bad \ufffd text"
    # the next run's request carried the stored conversation, mended: a client can send it
    sent = [message.content for message in model.requests[-1].history]
    assert sent == ["hi", None, "x\ufffdy", "again", "bad \ufffd text", "more"]


def test_only_text_with_no_utf8_form_is_mended_and_the_record_is_left_as_it_was() -> None:
    arguments = {"k\ud800": ["v\udfff", ("t\udc00",)]}
    message = AssistantMessage(None, tool_calls=[ToolCall("c1", "echo", arguments)])
    assert '"k\ufffd":["v\ufffd",["t\ufffd"]]' in encode_message(message)
    assert arguments == {"k\ud800": ["v\udfff", ("t\udc00",)]}  # not mended in place
    assert encode_value({"a": "\ud800"}) == '{"a":"\ufffd"}'
    assert encode_message(AssistantMessage("café")) == AssistantMessage("café").to_json()
    with pytest.raises(ValueError, match="Unable to serialize"):
        encode_value(object())  # any other failure is raised as before
