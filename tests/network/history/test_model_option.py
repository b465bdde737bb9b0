"""`checked_model`: the one check of `Agent(model=...)` and `Network(default_model=...)`."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from agents import ScriptedModel
from network.errors import ConfigurationError
from network.history.messages import AssistantMessage
from network.history.model_io import ModelResponse
from network.history.model_option import checked_model


@pytest.mark.parametrize(
    "model", [None, "openai/gpt-4o-mini", {"model": "openai/x", "api_base": "http://x"}]
)
def test_a_model_option_is_kept_as_it_is(model: object) -> None:
    assert checked_model("agent 'a'", "model", model) is model


def test_a_model_object_is_anything_with_a_complete_method() -> None:
    model = ScriptedModel(["x"])
    assert checked_model("agent 'a'", "model", model) is model


@pytest.mark.parametrize(
    ("model", "says"),
    [
        (3, "must be a model string, a mapping of make_model arguments, a Model object or None"),
        (True, "must be a model string"),
        ("", "is an empty model name"),
        ({"api_base": "http://x"}, "as a mapping needs a 'model' string"),
        ({"model": ""}, "as a mapping needs a 'model' string"),
        (object(), "must be a model string"),
    ],
)
def test_what_is_no_model_is_refused_naming_the_owner_and_the_option(
    model: object, says: str
) -> None:
    with pytest.raises(ConfigurationError, match=rf"network 'n': default_model {says}"):
        checked_model("network 'n'", "default_model", model)


class _RequestOnly:
    name = "request-only"

    async def complete(self, request: object) -> object:
        return None


class _KeywordChunks:
    name = "keyword-chunks"

    async def complete(self, request: object, *, on_chunk: object = None) -> object:
        return None


@pytest.mark.parametrize("model", [_RequestOnly(), _KeywordChunks()])
def test_a_model_whose_complete_the_agent_step_cannot_call_is_refused(model: object) -> None:
    # the step calls complete(request, on_chunk): before, the first run failed with
    # "complete() takes 2 positional arguments but 3 were given", naming no agent
    with pytest.raises(ConfigurationError, match=r"agent 'a': model _\w+'s complete\(\) cannot"):
        checked_model("agent 'a'", "model", model)


class _Answers:
    name = "answers"

    def complete(self, request: object, on_chunk: object = None) -> ModelResponse:
        return ModelResponse(AssistantMessage("Hi"))


class _Hands:
    name = "hands"

    def complete(self, request: object, on_chunk: object = None):  # type: ignore[no-untyped-def]
        return ScriptedModel(["Hi"]).complete(request, on_chunk)


def test_a_plain_def_complete_that_says_it_returns_a_model_response_is_refused() -> None:
    # before: accepted, and the first run failed with "object ModelResponse can't be used in
    # 'await' expression"
    with pytest.raises(
        ConfigurationError,
        match=r"agent 'a': model _Answers's complete\(\) is a plain def that returns a "
        r"ModelResponse: a Model defines `async def complete",
    ):
        checked_model("agent 'a'", "model", _Answers())
    hands = _Hands()  # no annotation: it may return a coroutine (tested as it answers)
    assert checked_model("agent 'a'", "model", hands) is hands


def _traced(complete: Any) -> Any:
    @functools.wraps(complete)  # copies the annotations: "-> ModelResponse"
    def handing_on(*arguments: Any) -> Any:
        return complete(*arguments)

    return handing_on


class _Decorated:
    name = "decorated"

    @_traced
    async def complete(self, request: object, on_chunk: object = None) -> ModelResponse:
        return ModelResponse(AssistantMessage("Hi"))


def test_a_decorated_async_complete_is_a_model() -> None:
    decorated = _Decorated()  # its complete is a plain def, annotated as the async def it wraps
    assert checked_model("agent 'a'", "model", decorated) is decorated


class _Looped:
    name = "looped"

    def complete(self, request: object, on_chunk: object = None) -> ModelResponse:
        return ModelResponse(AssistantMessage("Hi"))

    complete.__wrapped__ = complete  # type: ignore[attr-defined]


def test_a_complete_that_wraps_itself_is_tested_as_it_answers_not_looped_over() -> None:
    looped = _Looped()  # a loop over __wrapped__ never ended
    assert checked_model("agent 'a'", "model", looped) is looped
