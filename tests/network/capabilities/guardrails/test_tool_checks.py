"""Tool guardrails: on a call's arguments before the tool runs, on its result before the model
sees it; a rejection is the result the model reads, a trip stops the run."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, call, tool
from network import AssistantMessage, Network, StopReason, ToolCall
from network.capabilities.guardrails import (
    GuardrailResult,
    ToolCallCheck,
    tool_input_guardrail,
    tool_output_guardrail,
)

pytestmark = pytest.mark.anyio


@tool_input_guardrail
def no_first_class(ctx: Any, check: ToolCallCheck) -> GuardrailResult:
    if check.arguments.get("cabin") == "first":
        return GuardrailResult.reject("first class needs a manager's approval")
    if check.arguments.get("cabin") == "cargo":
        return GuardrailResult.trip({"cabin": "cargo"})
    return GuardrailResult.allow()


@tool_output_guardrail
def no_card_numbers(ctx: Any, check: ToolCallCheck) -> GuardrailResult:
    if "4111" in (check.content or ""):
        return GuardrailResult.reject("the result held a card number and was withheld")
    if "secret" in (check.content or ""):
        return GuardrailResult.trip("secret in a tool result")
    return GuardrailResult.allow()


def booking_network(answers: list[Any], receipt: str = "ok") -> tuple[Network, list[str], Any]:
    ran: list[str] = []

    @tool(input_guardrails=[no_first_class], output_guardrails=[no_card_numbers])
    def book(cabin: str) -> str:
        """Book a seat in a cabin."""
        ran.append(cabin)
        return f"{cabin}: {receipt}"

    @tool(outputs_to_state={"booked": {"source": "cabin"}})
    def note(cabin: str) -> dict[str, str]:
        """Note the cabin."""
        return {"cabin": cabin}

    model = ScriptedModel(answers)
    agent = Agent("booker", model=model, tools=[book, note])
    return agent.run, ran, model  # type: ignore[return-value]


async def test_a_rejected_call_never_runs_and_the_model_reads_why() -> None:
    run, ran, model = booking_network([[call("book", cabin="first")], "sorry"])
    result = await run("book first")
    assert ran == []
    record = result.results[0].tool_calls[0]
    assert record.is_error and record.error_type == "GuardrailRejected"
    assert "manager's approval" in record.content
    # the model's next request carries the rejection as the call's result
    assert "manager's approval" in model.requests[1].history[-1].content
    assert result.output == "sorry"


async def test_an_allowed_call_runs() -> None:
    run, ran, _ = booking_network([[call("book", cabin="economy")], "done"])
    result = await run("book economy")
    assert ran == ["economy"] and not result.results[0].tool_calls[0].is_error


async def test_a_tripped_argument_check_stops_the_run_and_commits_nothing() -> None:
    run, ran, model = booking_network(
        [[call("note", cabin="cargo"), call("book", cabin="cargo")], "never"]
    )
    result = await run("ship me")
    assert result.stop_reason == StopReason.GUARDRAIL
    tripped = result.guardrail
    assert (tripped.kind, tripped.tool, tripped.agent) == ("tool_input", "book", "booker")
    assert tripped.info == {"cabin": "cargo"}
    assert ran == []
    assert result.results == [] and "booked" not in result  # the other call's write is gone
    assert len(model.requests) == 1


async def test_a_rejected_result_is_withheld_from_the_model() -> None:
    run, ran, model = booking_network([[call("book", cabin="economy")], "ok"], "card 4111")
    result = await run("book")
    assert ran == ["economy"]  # it ran; its result was replaced
    record = result.results[0].tool_calls[0]
    assert record.is_error and "withheld" in record.content
    assert "4111" not in model.requests[1].history[-1].content


async def test_a_tripped_result_check_stops_the_run() -> None:
    run, ran, _ = booking_network([[call("book", cabin="economy")], "never"], "secret")
    result = await run("book")
    assert result.stop_reason == "guardrail" and result.guardrail.kind == "tool_output"
    assert ran == ["economy"] and result.results == []


async def test_a_tool_guardrails_trip_undoes_what_the_call_wrote_before_it() -> None:
    @tool(input_guardrails=[no_first_class])
    def book(cabin: str) -> str:
        """Book a seat in a cabin."""
        return cabin

    def on_start(agent_call: Any) -> None:
        agent_call.run.state.kv.set("started", True)

    agent = Agent(
        "booker",
        model=ScriptedModel([[call("book", cabin="cargo")]]),
        tools=[book],
        hooks={"on_start": on_start},
    )
    result = await agent.run("ship me")
    assert result.stop_reason == "guardrail"
    assert "started" not in result and result.state.kv.take_ops() == []


async def test_slow_sync_tool_guardrails_run_off_the_event_loop() -> None:
    # Each check waits for an event that only a task of the same event loop sets: run on the
    # loop, it would wait its whole 10 s with the loop stalled, and say so.
    gates: list[threading.Event] = []
    waited: list[bool] = []

    def wait_for_the_loop(ctx: Any, check: ToolCallCheck) -> GuardrailResult:
        gate = threading.Event()
        gates.append(gate)
        waited.append(gate.wait(timeout=10))
        return GuardrailResult.allow()

    @tool(
        input_guardrails=[tool_input_guardrail(wait_for_the_loop, name="before")],
        output_guardrails=[tool_output_guardrail(wait_for_the_loop, name="after")],
    )
    def ping() -> str:
        """Ping."""
        return "pong"

    agent = Agent("a", tools=[ping], model=ScriptedModel([[call("ping")], "done"]))

    async def open_the_gates() -> None:
        while len(waited) < 2:
            for gate in gates:
                gate.set()
            await anyio.sleep(0.01)

    async with anyio.create_task_group() as group:
        group.start_soon(open_the_gates)
        result = await agent.run("ping")
    assert waited == [True, True] and result.output == "done"


async def test_the_checks_see_the_arguments_the_tool_gets_and_never_invalid_ones() -> None:
    # A check of the model's raw arguments would let "800" through (not an int) to a tool
    # that runs it as 800, and would fail the run on "lots" or on arguments that are not JSON
    seen: list[Any] = []

    @tool_input_guardrail
    def refund_limit(ctx: Any, check: ToolCallCheck) -> GuardrailResult:
        seen.append(check.arguments)
        if check.arguments["amount"] > 500:
            return GuardrailResult.reject("refunds over 500 need a manager")
        return GuardrailResult.allow()

    @tool_output_guardrail
    def sees_the_same(ctx: Any, check: ToolCallCheck) -> GuardrailResult:
        seen.append(check.arguments)
        return GuardrailResult.allow()

    refunded: list[int] = []

    @tool(input_guardrails=[refund_limit], output_guardrails=[sees_the_same])
    def refund(amount: int) -> str:
        """Refund an amount."""
        refunded.append(amount)
        return "done"

    bad_json = AssistantMessage("", [ToolCall("c1", "refund", "{not json")])
    answers = [
        [call("refund", amount="800")],
        [call("refund", amount="lots")],
        bad_json,
        [call("refund", amount="20")],
        "ok",
    ]
    result = await Agent("desk", tools=[refund], model=ScriptedModel(answers)).run("refund")
    records = [call.tool_calls[0] for call in result.results[:4]]
    assert [record.error_type for record in records] == [
        "GuardrailRejected",
        "ToolError",  # the tool's own validation error, the model reads what is wrong
        "ToolError",
        None,
    ]
    assert "amount" in records[1].content and "JSON" in records[2].content
    assert refunded == [20] and result.output == "ok"
    assert seen == [{"amount": 800}, {"amount": 20}, {"amount": 20}]
