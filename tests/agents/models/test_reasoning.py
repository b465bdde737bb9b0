"""Reasoning models on the wire: their thinking read by both clients, kept, never sent back.

vLLM and DeepSeek send `reasoning_content`, OpenRouter `reasoning`, in a stream's deltas or in
the answer's message; the token count comes in `completion_tokens_details.reasoning_tokens`.
The fake server on 127.0.0.1 speaks each of those.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents import ModelRequest, ReasoningDelta, TextDelta
from network import AssistantMessage, SystemMessage, UserMessage
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

USAGE = {
    "prompt_tokens": 20,
    "completion_tokens": 50,
    "total_tokens": 70,
    "completion_tokens_details": {"reasoning_tokens": 42},
}


def ask(history: list[Any] | None = None) -> ModelRequest:
    return ModelRequest([SystemMessage("Think, then answer.")], history or [UserMessage("2+2?")])


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_streamed_reasoning_reaches_the_caller_and_the_result(
    openai_server: FakeOpenAIServer, client: Any, field: str
) -> None:
    thinking = "Two and two make four."
    openai_server.add(Reply(text="4", reasoning=thinking, reasoning_field=field, usage=USAGE))
    seen: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        seen.append(chunk)

    response = await client(openai_server.base_url, max_retries=0).complete(ask(), on_chunk)

    pieces = [c.text for c in seen if isinstance(c, ReasoningDelta)]
    assert len(pieces) > 1 and "".join(pieces) == thinking  # streamed, in pieces
    first_text = next(i for i, c in enumerate(seen) if isinstance(c, TextDelta))
    assert all(isinstance(c, ReasoningDelta) for c in seen[:first_text])  # thinking first
    assert response.message.reasoning == thinking
    assert response.message.content == "4"
    assert response.usage.reasoning_tokens == 42
    assert response.usage.completion_tokens == 50


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_a_plain_answer_keeps_its_reasoning(
    openai_server: FakeOpenAIServer, client: Any, field: str
) -> None:
    openai_server.add(Reply(text="4", reasoning="Add them.", reasoning_field=field, usage=USAGE))
    response = await client(openai_server.base_url, max_retries=0).complete(ask())
    assert response.message.reasoning == "Add them."
    assert response.usage.reasoning_tokens == 42


async def test_reasoning_is_never_sent_back(openai_server: FakeOpenAIServer, client: Any) -> None:
    openai_server.add(Reply(text="4", reasoning="Add them.")).add_text("Yes.")
    model = client(openai_server.base_url, max_retries=0)
    first = await model.complete(ask())
    history = [UserMessage("2+2?"), first.message, UserMessage("Sure?")]
    # An assistant message holding only reasoning (a client's, with no answer) is not sent.
    history.insert(1, AssistantMessage(reasoning="A thought with no answer."))
    await model.complete(ask(history))
    sent = openai_server.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert "Add them." not in str(sent) and "no answer" not in str(sent)
    assert all("reasoning" not in key for message in sent for key in message)
