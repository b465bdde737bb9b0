"""Typed agent output: `Agent(output_type=...)`, its three modes and the typed value it stores."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agents import ScriptedModel, call, tool
from network import ConfigurationError, Network, RunContext, Stop, ThreadRef
from tests.agents.capabilities.output.ticket import TICKET, Ticket, agent

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


class Bug(BaseModel):
    kind: Literal["bug"]
    steps: str


class Feature(BaseModel):
    kind: Literal["feature"]
    why: str


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


async def test_an_undeclared_output_key_holds_the_typed_object() -> None:
    triage = agent(ScriptedModel([json.dumps(TICKET)]), output_type=Ticket, output_key="ticket")
    result = await triage.run("x")  # declared as Ticket (network.state.output_keys)
    assert result["ticket"] == Ticket(**TICKET)


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


def test_bad_output_options_are_configuration_errors() -> None:
    model = ScriptedModel([])
    with pytest.raises(ConfigurationError, match="output_mode 'json'"):
        agent(model, output_type=Ticket, output_mode="json")
    with pytest.raises(ConfigurationError, match="output_retries"):
        agent(model, output_type=Ticket, output_retries=-1)
    with pytest.raises(ConfigurationError, match="output_type .* cannot be validated"):
        agent(model, output_type=object())


async def test_typed_output_survives_a_thread_store(tmp_path: Any) -> None:
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
    assert second["ticket"] == Ticket(**TICKET)  # the key is typed: the object comes back
