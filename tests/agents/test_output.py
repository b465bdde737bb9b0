"""Typed agent output: `Agent(output_type=...)`, its three modes, re-asks and the typed value."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel, call, tool
from network import (
    ConfigurationError,
    Network,
    OutputValidationError,
    RunContext,
    Stop,
    ThreadRef,
    UserMessage,
)
from tests.network.agui.protocol import replay, wire

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


class Ticket(BaseModel):
    title: str
    priority: int
    tags: list[str] = []


class Bug(BaseModel):
    kind: Literal["bug"]
    steps: str


class Feature(BaseModel):
    kind: Literal["feature"]
    why: str


TICKET = {"title": "Login fails", "priority": 2, "tags": ["auth"]}


def agent(model: ScriptedModel, **options: Any) -> Agent:
    return Agent("triage", system="File a ticket.", model=model, **options)


async def test_native_mode_sends_the_schema_and_returns_the_validated_object() -> None:
    model = ScriptedModel([json.dumps(TICKET)])
    result = await agent(model, output_type=Ticket).run("login is broken")
    (request,) = model.requests
    assert request.response_format is not None
    assert request.response_format["type"] == "json_schema"
    schema = request.response_format["json_schema"]["schema"]
    assert schema["properties"]["priority"]["type"] == "integer"
    assert request.response_format["json_schema"]["name"] == "Ticket"
    value = result.results[-1].output_value
    assert isinstance(value, Ticket) and value == Ticket(**TICKET)


async def test_output_key_stores_the_object_through_a_typed_key_and_routers_read_it() -> None:
    class Schema(BaseModel):
        ticket: Ticket | None = None

    seen: list[Any] = []
    triage = agent(ScriptedModel([json.dumps(TICKET)]), output_type=Ticket, output_key="ticket")

    def route(ctx: RunContext) -> Any:
        if ctx.last_result is None:
            return triage
        seen.append(ctx.last_result.output_value.priority)  # typed, no parsing
        ticket = ctx.kv.get("ticket")
        return Stop("urgent" if ticket.priority < 3 else "later")

    result = await Network("n", agents=[triage], router=route, state_schema=Schema).run("x")
    assert seen == [2]
    assert isinstance(result["ticket"], Ticket)
    assert result.stop_reason == "urgent"


async def test_an_untyped_output_key_stores_the_json_form() -> None:
    triage = agent(ScriptedModel([json.dumps(TICKET)]), output_type=Ticket, output_key="ticket")
    result = await triage.run("x")
    assert result["ticket"] == TICKET


async def test_lists_and_unions_are_wrapped_in_an_object_and_unwrapped() -> None:
    model = ScriptedModel(
        [json.dumps({"response": [TICKET, TICKET]}), json.dumps({"kind": "bug", "steps": "1"})]
    )
    tickets = await agent(model, output_type=list[Ticket]).run("x")
    schema = model.requests[0].response_format["json_schema"]["schema"]
    assert schema["required"] == ["response"]
    assert schema["properties"]["response"]["type"] == "array"
    assert "$defs" in schema  # the item model's definition, at the root where $ref finds it
    assert tickets.results[-1].output_value == [Ticket(**TICKET)] * 2
    union = await agent(model, output_type=Bug | Feature).run("x")
    assert union.results[-1].output_value == Bug(kind="bug", steps="1")


async def test_tool_mode_forces_a_final_output_tool_and_keeps_history_clean() -> None:
    model = ScriptedModel([call("final_output", **TICKET)], structured_output="tool")
    result = await agent(model, output_type=Ticket).run("x")
    (request,) = model.requests
    assert request.response_format is None
    assert request.tool_names == ["final_output"]
    assert request.tool_choice == "final_output"
    assert request.tools[0]["function"]["parameters"]["properties"]["title"]["type"] == "string"
    last = result.results[-1]
    assert last.output_value == Ticket(**TICKET)
    (message,) = last.output
    assert message.tool_calls == [] and json.loads(message.content) == TICKET
    assert result.stop_reason == "agent_answered" and len(result.results) == 1


async def test_tool_mode_with_other_tools_requires_a_tool_and_runs_them_first() -> None:
    @tool
    def lookup(user: str) -> str:
        """Look a user up."""
        return f"{user} is on the free plan"

    model = ScriptedModel(
        [call("lookup", user="ann"), call("final_output", **TICKET)], structured_output="tool"
    )
    result = await agent(model, output_type=Ticket, tools=[lookup]).run("x")
    assert [r.tool_names for r in model.requests] == [["lookup", "final_output"]] * 2
    assert {r.tool_choice for r in model.requests} == {"required"}
    first, second = result.results
    assert first.output_value is None and first.tool_calls[0].name == "lookup"
    assert second.output_value == Ticket(**TICKET)


async def test_prompted_mode_puts_the_schema_in_the_instructions() -> None:
    model = ScriptedModel(["```json\n" + json.dumps(TICKET) + "\n```"])
    result = await agent(model, output_type=Ticket, output_mode="prompted").run("x")
    (request,) = model.requests
    assert request.response_format is None and request.tools == []
    assert "Answer with only a JSON value" in request.system[-1].content
    assert '"priority"' in request.system[-1].content
    assert result.results[-1].output_value == Ticket(**TICKET)


async def test_a_model_without_a_declared_capability_gets_prompted_mode() -> None:
    class Plain:
        name = "plain"

        def __init__(self) -> None:
            self.inner = ScriptedModel([json.dumps(TICKET)])

        async def complete(self, request: Any, on_chunk: Any = None) -> Any:
            return await self.inner.complete(request, on_chunk)

    model = Plain()
    result = await agent(model, output_type=Ticket).run("x")  # type: ignore[arg-type]
    assert "Answer with only a JSON value" in model.inner.requests[0].system[-1].content
    assert result.results[-1].output_value == Ticket(**TICKET)


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


def test_bad_output_options_are_configuration_errors() -> None:
    model = ScriptedModel([])
    with pytest.raises(ConfigurationError, match="output_mode 'json'"):
        agent(model, output_type=Ticket, output_mode="json")
    with pytest.raises(ConfigurationError, match="output_retries"):
        agent(model, output_type=Ticket, output_retries=-1)
    with pytest.raises(ConfigurationError, match="output_type .* cannot be validated"):
        agent(model, output_type=object())


async def test_partial_output_streams_as_predictive_state_and_is_then_committed() -> None:
    class Schema(BaseModel):
        ticket: Ticket | None = None

    text = json.dumps(TICKET)
    triage = agent(
        ScriptedModel([text], stream=True, chunk_size=5), output_type=Ticket, output_key="ticket"
    )
    network = Network("n", agents=[triage], state_schema=Schema)
    async with network.stream("x") as stream:
        got = [event async for event in stream]
    run = replay(wire(got))
    start = run.types.index("TEXT_MESSAGE_START")
    end = run.types.index("TEXT_MESSAGE_END")
    predicted = [e["delta"] for e in run.events[start:end] if e["type"] == "STATE_DELTA"]
    assert len(predicted) >= 3  # the form fills as the JSON grows
    values = [delta[0]["value"] for delta in predicted]
    assert all(delta[0]["path"] == "/ticket" for delta in predicted)
    assert values[-1] == TICKET
    assert any(v.get("title") not in (None, "Login fails") for v in values)  # a title half-written
    assert run.state["ticket"] == TICKET  # the committed value, as the client has it
    assert isinstance(stream.result["ticket"], Ticket)


async def test_a_prediction_that_never_validates_is_taken_back() -> None:
    triage = agent(
        ScriptedModel(['{"title": "half"}'], stream=True, repeat_last=True),
        output_type=Ticket,
        output_key="ticket",
        output_retries=1,
    )
    network = Network("n", agents=[triage])
    got: list[Any] = []
    with pytest.raises(OutputValidationError):
        async with network.stream("x") as stream:
            async for event in stream:
                got.append(event)
    run = replay(wire(got), allow_error=True)
    deltas = [e["delta"] for e in run.events if e["type"] == "STATE_DELTA"]
    assert [{"op": "add", "path": "/ticket", "value": {"title": "half"}}] in deltas
    assert deltas[-1] == [{"op": "remove", "path": "/ticket"}]
    assert "ticket" not in run.state
    assert run.error is not None  # the run failed with OutputValidationError
    invalid = [e["value"] for e in run.of("CUSTOM") if e["name"] == "OutputInvalid"]
    assert [(v["attempt"], v["retrying"]) for v in invalid] == [(1, True), (2, False)]
    assert invalid[0]["agent"] == "triage" and "priority: Field required" in invalid[0]["errors"]


async def test_typed_output_survives_a_thread_store_as_its_json_form(tmp_path: Any) -> None:
    triage = agent(
        ScriptedModel(lambda request: json.dumps(TICKET)), output_type=Ticket, output_key="ticket"
    )
    network = Network("n", agents=[triage])
    store = str(tmp_path / "threads.db")
    await network.run("first", thread=ThreadRef("t1", store=store))
    second = await network.run("second", thread=ThreadRef("t1", store=store))
    loaded, fresh = second.results
    assert loaded.output_value == TICKET  # read back from SQLite: the JSON form
    assert fresh.output_value == Ticket(**TICKET)
    assert second["ticket"] == TICKET
