"""Typed output, one inference: an answer that does not validate is asked again, on a budget."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from agents import ScriptedModel
from network import Network, OutputValidationError, UserMessage
from tests.agents.capabilities.output.ticket import TICKET, Ticket, agent

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


async def test_invalid_output_is_asked_again_with_the_errors_replacing_the_attempt() -> None:
    model = ScriptedModel(
        ['{"title": "x"}', "not json at all", json.dumps(TICKET)]  # two failures, then valid
    )
    result = await agent(model, output_type=Ticket).run("x")
    first, second, third = model.requests
    assert len(first.history) == 1  # the user's input
    assert len(second.history) == len(third.history) == 2  # one feedback message, never more
    feedback = second.history[-1]
    assert isinstance(feedback, UserMessage)
    assert "priority: Field required" in feedback.content and '{"title": "x"}' in feedback.content
    assert "not valid JSON" in third.history[-1].content
    assert "priority" not in third.history[-1].content  # the earlier attempt is gone
    assert result.results[-1].output_value == Ticket(**TICKET)
    assert len(result.results) == 1  # the re-asks are one agent call
    assert result.results[-1].usage.completion_tokens > 8  # usage counts every attempt
    assert [m.content for m in result.messages][-1] == json.dumps(TICKET)  # history: valid only


async def test_when_the_budget_is_spent_the_error_names_agent_attempts_errors_and_text() -> None:
    model = ScriptedModel(['{"title": 1}'], repeat_last=True)
    with pytest.raises(OutputValidationError) as caught:
        await agent(model, output_type=Ticket).run("x")
    error = caught.value
    assert error.agent == "triage" and error.attempts == 3 and len(model.requests) == 3
    assert error.raw == '{"title": 1}'
    assert len(error.errors) == 3
    assert "title: Input should be a valid string" in error.errors[0]
    assert "priority: Field required" in error.errors[0]
    assert "'triage'" in str(error) and "3 attempt(s)" in str(error)
    assert error.partial_result is not None


async def test_output_retries_sets_the_budget() -> None:
    model = ScriptedModel(["{}"], repeat_last=True)
    with pytest.raises(OutputValidationError):
        await agent(model, output_type=Ticket, output_retries=0).run("x")
    assert len(model.requests) == 1


@pytest.mark.parametrize("price", ["NaN", "Infinity", "-Infinity", "1e999"])
async def test_a_non_finite_number_is_an_invalid_answer_asked_again(price: str) -> None:
    # JSON has no NaN or infinity (Python's json reads them, and 1e999 as infinity): such an
    # answer is re-asked like any invalid one, never stored where no JSON form could hold it
    class Quote(BaseModel):
        price: float

    model = ScriptedModel([f'{{"price": {price}}}', '{"price": 2.5}'])
    quoter = agent(model, output_type=Quote, output_key="quote")
    result = await Network("shop", agents=[quoter]).run("a quote, please")
    assert result["quote"] == Quote(price=2.5)
    assert "not valid JSON" in model.requests[1].history[-1].content
    assert len(result.state.history_of("quote")) == 1  # the non-finite answer never stored


@pytest.mark.parametrize("price", ['"nan"', '"-Infinity"', '["inf"]'])
async def test_a_non_finite_number_given_as_a_string_is_asked_again(price: str) -> None:
    # pydantic reads the strings "nan" and "inf" as floats: before, such a value was kept
    class Quote(BaseModel):
        price: float | list[float]

    model = ScriptedModel([f'{{"price": {price}}}', '{"price": 2.5}'])
    quoter = agent(model, output_type=Quote, output_key="quote")
    result = await Network("shop", agents=[quoter]).run("a quote, please")
    assert result["quote"] == Quote(price=2.5)
    assert "price" in model.requests[1].history[-1].content
    assert "Input should be a finite number" in model.requests[1].history[-1].content


async def test_an_answer_nested_past_pythons_stack_is_asked_again() -> None:
    # before, the model's garbage failed the run with a RecursionError
    model = ScriptedModel(["[" * 100_000, json.dumps(TICKET)])
    result = await agent(model, output_type=Ticket).run("x")
    assert result.results[-1].output_value == Ticket(**TICKET)
    assert "nested too deeply" in model.requests[1].history[-1].content
