"""The `Model` protocol and its data: a request keeps system messages and conversation apart
and joins them on demand; anything with an async `complete` is a model."""

from __future__ import annotations

from agents.models.base import Model, ModelRequest, ModelResponse
from network.history.messages import AssistantMessage, SystemMessage, UserMessage
from network.history.results import Usage


def test_a_request_joins_system_and_history_without_touching_either() -> None:
    system = [SystemMessage("be brief")]
    history = [UserMessage("hi"), AssistantMessage("hello")]
    request = ModelRequest(system=system, history=history, agent="writer")
    assert request.messages == [*system, *history]
    request.messages.append(UserMessage("more"))  # a new list each time
    assert len(history) == 2 and len(request.messages) == 3
    assert request.tools == [] and request.tool_choice is None and request.response_format is None


def test_tool_names_are_read_from_the_function_schemas() -> None:
    tools = [{"type": "function", "function": {"name": name, "parameters": {}}} for name in "ab"]
    assert ModelRequest(system=[], history=[], tools=tools).tool_names == ["a", "b"]


def test_a_response_says_nothing_it_does_not_know() -> None:
    response = ModelResponse(message=AssistantMessage("x"))
    assert response.usage == Usage() and response.model is None and response.cost_usd is None
    assert response.attempts == () and not response.tool_choice_relaxed


def test_anything_with_a_name_and_an_async_complete_is_a_model() -> None:
    class Echo:
        name = "echo"

        async def complete(self, request: ModelRequest, on_chunk: object = None) -> ModelResponse:
            return ModelResponse(message=AssistantMessage(str(request.messages[-1].content)))

    class Nameless:
        async def complete(self, request: ModelRequest) -> ModelResponse:
            raise NotImplementedError

    assert isinstance(Echo(), Model)
    assert not isinstance(Nameless(), Model)  # traces and errors name the model
