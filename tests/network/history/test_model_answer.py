"""`network.history.model_answer`: what a model's `complete()` returned, tested before it is
awaited."""

from __future__ import annotations

from typing import Any

import pytest

from agents import ScriptedModel
from network.errors import ModelError
from network.history.messages import AssistantMessage, UserMessage
from network.history.model_answer import answer_of, awaitable_answer, model_shown
from network.history.model_io import ModelRequest, ModelResponse

pytestmark = pytest.mark.anyio


class _Unnamed:
    def complete(self, request: Any, on_chunk: Any = None) -> Any:
        return None


def test_a_model_is_shown_by_its_name_else_its_class() -> None:
    assert model_shown(ScriptedModel(["x"], name="mine")) == "mine"
    assert model_shown(_Unnamed()) == "_Unnamed"


async def test_what_is_awaitable_is_handed_back_and_what_is_not_is_a_model_error() -> None:
    async def answer() -> str:
        return "x"

    pending = answer()
    assert awaitable_answer(pending, _Unnamed(), "a") is pending
    assert await pending == "x"
    with pytest.raises(
        ModelError, match=r"model '_Unnamed' of agent 'a': its complete\(\) returned None, not an"
    ) as raised:
        awaitable_answer(None, _Unnamed(), "a")
    assert raised.value.model == "_Unnamed"
    with pytest.raises(ModelError, match=r"^model '_Unnamed': its complete\(\) returned a str"):
        awaitable_answer("Hi", _Unnamed(), None)


async def test_answer_of_awaits_a_models_answer_or_says_what_it_returned() -> None:
    request = ModelRequest([], [UserMessage("Hi")])
    response = await answer_of(ScriptedModel(["Hello."]), "a", request, None)
    assert isinstance(response, ModelResponse) and response.message == AssistantMessage("Hello.")
    with pytest.raises(ModelError, match="returned None, not an awaitable"):
        await answer_of(_Unnamed(), "a", request)
