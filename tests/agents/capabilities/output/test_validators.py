"""Output validators: a final answer checked against the run, re-asked on `Retry(reason)`
within `output_retries`, a rejected value never the output nor stored."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from agents import Agent, ScriptedModel
from network import ConfigurationError, Network, OutputValidationError, Retry, UserMessage
from tests.agents.capabilities.output.ticket import TICKET, Ticket, agent

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


@dataclass
class Desk:
    """The run's deps: priorities this desk takes."""

    priorities: set[int]


def desk_takes(ctx: Any, ticket: Ticket) -> Ticket:
    if ticket.priority not in ctx.deps.priorities:
        raise Retry(f"priority {ticket.priority} is not handled here; use one of {[1, 2]}")
    return ticket


async def test_a_rejected_typed_answer_is_asked_again_with_the_reason_and_never_stored() -> None:
    wrong = {**TICKET, "priority": 7}
    model = ScriptedModel([json.dumps(wrong), json.dumps(TICKET)])
    triage = agent(model, output_type=Ticket, output_validators=[desk_takes], output_key="ticket")
    network = Network("desk", agents=[triage])

    result = await network.run("file it", deps=Desk({1, 2}))

    first, second = model.requests
    feedback = second.history[-1]
    assert isinstance(feedback, UserMessage)
    assert "priority 7 is not handled here" in feedback.content
    assert '"priority": 7' in feedback.content  # its answer, quoted
    assert len(second.history) == len(first.history) + 1  # one message more, never more
    (call,) = result.results  # the re-ask is the same agent call
    assert call.output_value == Ticket(**TICKET)
    assert result["ticket"] == Ticket(**TICKET)
    assert len(result.state.history_of("ticket")) == 1  # the rejected value was never written
    (delta,) = call.state_delta or []
    assert delta["value"]["priority"] == 2
    assert json.dumps(wrong) not in [m.content for m in result.messages]
    once = await agent(ScriptedModel([json.dumps(TICKET)]), output_type=Ticket).run("file it")
    assert call.usage.completion_tokens > once.results[0].usage.completion_tokens  # both counted


async def test_a_text_answer_is_validated_and_may_be_changed_by_a_plain_validator() -> None:
    async def no_shouting(text: str) -> str:
        if text.isupper():
            raise Retry("do not shout")
        return text.strip() + "."

    model = ScriptedModel(["HELLO", "  hello there "])
    greeter = Agent("greeter", model=model, output_validators=[no_shouting], output_key="said")
    network = Network("n", agents=[greeter], state_schema={"said": {"type": str}})
    result = await network.run("greet")

    assert result["said"] == "hello there."
    assert "do not shout" in model.requests[1].history[-1].content
    assert len(result.state.history_of("said")) == 1


async def test_an_answer_that_asks_for_tools_is_not_validated() -> None:
    from agents import call, tool

    @tool
    def look() -> str:
        """Look."""
        return "seen"

    checked: list[str] = []

    def record(text: str) -> None:
        checked.append(text)

    looker = Agent(
        "looker", tools=[look], model=ScriptedModel([call("look"), "done"]),
        output_validators=[record],
    )  # fmt: skip
    await looker.run("go")
    assert checked == ["done"]


async def test_schema_errors_and_rejections_share_the_retry_budget() -> None:
    model = ScriptedModel(['{"title": 1}', json.dumps({**TICKET, "priority": 9})])
    triage = agent(
        model,
        output_type=Ticket,
        output_retries=1,
        output_validators=[desk_takes],
        output_key="ticket",
    )
    network = Network("desk", agents=[triage])
    seed = Ticket(title="old", priority=1)

    with pytest.raises(OutputValidationError) as caught:
        await network.run("file it", state={"ticket": seed}, deps=Desk({1}))

    error = caught.value
    assert error.agent == "triage" and error.attempts == 2 and len(model.requests) == 2
    assert "title: Input should be a valid string" in error.errors[0][0]
    assert error.errors[1] == ["priority 9 is not handled here; use one of [1, 2]"]
    assert "output_retries=1" in str(error)
    assert error.partial_result is not None
    assert error.partial_result["ticket"] == seed  # left as it was


async def test_the_decorator_adds_a_validator_and_clone_keeps_it() -> None:
    model = ScriptedModel(["no", "yes"])
    picky = Agent("picky", model=model)

    @picky.output_validator
    def only_yes(ctx: Any, text: str) -> None:
        assert ctx.input == "ask"  # the run's context
        if text != "yes":
            raise Retry("say yes")

    result = await picky.run("ask")
    assert result.output == "yes"
    assert picky.clone(name="copy").output_validators == [only_yes]


async def test_any_other_exception_of_a_validator_fails_the_call() -> None:
    def broken(text: str) -> str:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        await Agent("a", model=ScriptedModel(["x"]), output_validators=[broken]).run("go")


async def test_a_validator_returning_another_type_names_itself() -> None:
    # before, a typed agent's output_value was the int and its output_key write failed with a
    # StateValidationError naming neither the validator nor the agent
    def count_it(ticket: Ticket) -> int:
        return 5

    typed = agent(
        ScriptedModel([json.dumps(TICKET)]),
        output_type=Ticket,
        output_validators=[count_it],
        output_key="ticket",
    )
    with pytest.raises(ConfigurationError, match=r"'triage'.*count_it returned int.*Ticket"):
        await Network("desk", agents=[typed]).run("file it")

    def as_dict(ticket: Ticket) -> dict[str, Any]:  # the type's own JSON form: validated into it
        return {**ticket.model_dump(), "priority": 2}

    kept = agent(
        ScriptedModel([json.dumps(TICKET)]),
        output_type=Ticket,
        output_validators=[as_dict],
        output_key="ticket",
    )
    result = await Network("desk", agents=[kept]).run("file it")
    assert result["ticket"] == Ticket(**{**TICKET, "priority": 2})

    def not_text(text: str) -> list[str]:
        return [text]

    with pytest.raises(ConfigurationError, match=r"'a'.*not_text returned list.*text"):
        await Agent("a", model=ScriptedModel(["x"]), output_validators=[not_text]).run("go")


@pytest.mark.parametrize(
    ("validator", "message"),
    [
        ("not a function", "not callable"),
        (lambda a, b, c: a, "takes 3 required arguments"),
        (lambda: None, "takes 0 required arguments"),
    ],
)
def test_a_validator_of_the_wrong_shape_is_refused_naming_the_agent(
    validator: Any, message: str
) -> None:
    with pytest.raises(ConfigurationError, match=f"agent 'a'.*{message}"):
        Agent("a", model=ScriptedModel([]), output_validators=[validator])


@pytest.mark.parametrize("retries", [-1, 1.5, float("nan")])
def test_a_bad_retry_budget_is_refused(retries: Any) -> None:
    with pytest.raises(ConfigurationError, match="output_retries"):
        Agent("a", model=ScriptedModel([]), output_validators=[str], output_retries=retries)


@pytest.mark.parametrize("given", [None, "seat_is_free", str])
def test_validators_not_given_as_a_list_are_refused_naming_the_agent(given: Any) -> None:
    # None was a bare TypeError; a string was iterated into one "validator" per character
    with pytest.raises(ConfigurationError, match="agent 'a': output_validators must be a list"):
        Agent("a", model=ScriptedModel([]), output_validators=given)
