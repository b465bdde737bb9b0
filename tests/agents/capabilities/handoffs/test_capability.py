"""Handoffs (`Agent(handoffs=...)`, `handoff(...)`): the tools offered, the handoff made and
followed, `on_handoff`'s writes, `input_filter`, and every way a handoff can go wrong."""

from __future__ import annotations

from typing import Any

import pytest

import agents
from agents import Agent, ScriptedModel, ToolContext, call, handoff, without_tool_calls
from network import (
    ConfigurationError,
    Network,
    Parallel,
    RunContext,
    Stop,
    StopReason,
    ThreadRef,
)
from network.events import HandoffEvent
from network.history.handoffs import HandoffRecord
from network.history.messages import AssistantMessage, ToolMessage, UserMessage
from network.threads import SQLStore
from routers import END, GraphRouter, routing_agent
from tests.agents.airline import team

pytestmark = pytest.mark.anyio


def tool_names(model: Any, request: int = 0) -> list[str]:
    return [schema["function"]["name"] for schema in model.requests[request].tools]


def tool_schema(model: Any, name: str) -> dict[str, Any]:
    return next(s["function"] for s in model.requests[0].tools if s["function"]["name"] == name)


async def test_each_target_is_one_transfer_tool_with_a_safe_name_and_a_description() -> None:
    network, triage, _faq, _booking = team(["Hello."])
    assert agents.handoff is handoff and "handoff" in agents.__all__

    await network.run("hi")

    model = triage.model
    assert tool_names(model) == ["transfer_to_faq_agent", "transfer_to_seat_booking"]
    faq_tool = tool_schema(model, "transfer_to_faq_agent")
    # defaulted from the target's description; given by handoff(description=...) otherwise
    assert "Answers questions about bags, seats and wifi." in faq_tool["description"]
    assert tool_schema(model, "transfer_to_seat_booking")["description"] == "Change a seat."
    assert list(faq_tool["parameters"]["properties"]) == ["reason"]
    assert faq_tool["parameters"].get("required", []) == []
    # the agent's own tool list is untouched; the handoffs are what networks check and draw
    assert triage.tools == {} and triage.handoff_targets == ("FAQ Agent", "seat_booking")
    assert network.handoff_edges == (
        ("triage", "FAQ Agent"),
        ("triage", "seat_booking"),
        ("FAQ Agent", "triage"),
        ("seat_booking", "triage"),
    )


def test_a_targets_accents_are_dropped_from_its_tool_name_not_its_letters() -> None:
    # before, "Équipe Réseau" was transfer_to_quipe_r_seau
    from agents.capabilities.handoffs.options import handoff_tool_name

    assert handoff_tool_name("Équipe Réseau") == "transfer_to_equipe_reseau"
    assert handoff_tool_name("Ölçü") == "transfer_to_olcu"
    assert handoff_tool_name("日本語") == "transfer_to_agent"  # nothing left: give tool_name=


async def test_a_handoff_makes_the_target_answer_and_is_recorded_on_the_result() -> None:
    network, _triage, faq, _booking = team(
        [call("transfer_to_faq_agent", reason="a question about bags")],
        ["You may bring two bags."],
    )

    result = await network.run("How many bags may I bring?")

    assert [r.agent for r in result.results] == ["triage", "FAQ Agent"]
    assert result.output == "You may bring two bags."
    assert result.stop_reason == StopReason.ROUTER_FINISHED
    made = result.results[0].handoff
    assert isinstance(made, HandoffRecord)
    assert (made.source, made.target, made.reason) == (
        "triage",
        "FAQ Agent",
        "a question about bags",
    )
    assert made.call_id == result.results[0].tool_calls[0].id
    assert result.results[1].handoff is None
    # the target was sent the conversation with the handoff in it, as what it is (triage's
    # turns as context, never as the target's own: `network.capabilities.view`), and its own
    # instructions
    (request,) = faq.model.requests
    assert [m.role for m in request.history] == ["user", "user", "user"]
    assert request.history[1].content.startswith("[agent 'triage' called tool transfer_to_faq")
    assert request.history[2].content.startswith(
        "[tool transfer_to_faq_agent returned to agent 'triage'] Transferred to FAQ Agent"
    )
    assert request.system[0].content == "You answer airline questions."


async def test_the_target_loops_on_its_own_tools_and_can_hand_back() -> None:
    def lookup() -> str:
        """Look the seat map up."""
        return "12A is free"

    network, _triage, _faq, _booking = team(
        [call("transfer_to_seat_booking"), "Anything else?"],
        booking_script=[call("lookup"), call("transfer_to_triage", reason="done")],
        booking_tools=[lookup],
    )

    result = await network.run("Move me to 12A")

    assert [r.agent for r in result.results] == [
        "triage",
        "seat_booking",
        "seat_booking",
        "triage",
    ]
    assert [r.handoff.target if r.handoff else None for r in result.results] == [
        "seat_booking",
        None,
        "triage",
        None,
    ]
    assert result.results[1].tool_calls[0].content == "12A is free"
    assert result.output == "Anything else?"


async def test_on_handoff_writes_state_sync_or_async_validated_like_any_write() -> None:
    async def remember(ctx: ToolContext) -> None:
        ctx.kv.set("flight", "FLT-9")

    network, _triage, _faq, booking = team(
        [call("transfer_to_seat_booking")],
        booking_script=["Done."],
        on_booking=remember,
        schema={"flight": {"type": str}},
    )

    result = await network.run("Move me")

    assert result.state.kv.get("flight") == "FLT-9"
    # written by the handoff's tool call, and the target's instructions read it
    assert booking.model.requests[0].system[0].content.endswith("The flight is FLT-9.")
    (write,) = result.state.history_of("flight")
    assert write.writer.tool == "transfer_to_seat_booking"


async def test_a_bad_on_handoff_write_is_an_error_result_and_leaves_state_and_agent_alone() -> None:
    calls: list[str] = []

    def bad(ctx: ToolContext) -> None:
        calls.append("on_handoff")
        ctx.kv.set("seats", ["12A"])  # written, then undone with the rest
        ctx.kv.set("flight", 42)  # not a str: refused by the schema

    network, _triage, _faq, booking = team(
        [call("transfer_to_seat_booking"), "Sorry, I cannot move you."],
        booking_script=["never asked"],
        on_booking=bad,
        schema={"flight": {"type": str}, "seats": {"type": list[str]}},
    )

    result = await network.run("Move me", state={"flight": "FLT-1"})

    assert calls == ["on_handoff"]
    first = result.results[0]
    assert first.handoff is None
    (record,) = first.tool_calls
    assert record.is_error and record.error_type == "ToolError"
    assert "handoff to 'seat_booking' refused" in record.content and "flight" in record.content
    assert result.state.kv.data == {"flight": "FLT-1"}  # nothing of the handoff stayed
    assert [r.agent for r in result.results] == ["triage", "triage"]  # it read the error
    assert booking.model.requests == []
    assert result.output == "Sorry, I cannot move you."


async def test_an_on_handoff_that_raises_is_an_error_result_not_a_crash() -> None:
    def broken(ctx: ToolContext) -> None:
        raise RuntimeError("booking system down")

    network, triage, _faq, _booking = team(
        [call("transfer_to_seat_booking"), "Try later."], on_booking=broken
    )

    result = await network.run("Move me")

    record = result.results[0].tool_calls[0]
    assert record.is_error and result.results[0].handoff is None
    assert result.output == "Try later."
    # the application's exception is the model's to read, screened from clients (as a
    # sub-agent's failure is): before, a client read it whole in the TOOL_CALL_RESULT
    assert "booking system down" not in record.content
    assert "internal error (reference err_" in record.content
    assert "booking system down" in (record.model_only or "")
    told = triage.model.requests[1].history[-1]
    assert isinstance(told, ToolMessage) and "booking system down" in (told.model_only or "")


async def test_a_handoff_not_in_the_callers_list_is_an_error_result() -> None:
    # faq may hand back to triage only; the model asks for the booking agent anyway
    network, _triage, _faq, booking = team(
        [call("transfer_to_faq_agent")],
        [call("transfer_to_seat_booking"), "I can only answer questions."],
    )

    result = await network.run("Move me")

    record = result.results[1].tool_calls[0]
    assert record.is_error and record.error_type == "unknown_tool"
    assert "transfer_to_seat_booking" in record.content and "transfer_to_triage" in record.content
    assert result.results[1].handoff is None
    assert [r.agent for r in result.results] == ["triage", "FAQ Agent", "FAQ Agent"]
    assert booking.model.requests == []


async def test_a_handoff_to_an_agent_not_in_the_network_is_an_error_result() -> None:
    ghost = Agent("ghost", description="Not in any network.", model=ScriptedModel(["boo"]))
    lonely = Agent(
        "lonely",
        handoffs=[ghost],
        model=ScriptedModel([call("transfer_to_ghost"), "I will answer myself."]),
    )
    helper = Agent("helper", model=ScriptedModel(["help"]))
    network = Network("n", agents=[lonely, helper], router=_again(lonely))

    result = await network.run("hi")

    record = result.results[0].tool_calls[0]
    assert record.is_error
    assert "cannot hand off to agent 'ghost'" in record.content
    assert "lonely, helper" in record.content
    assert result.results[0].handoff is None and result.output == "I will answer myself."


def _again(agent: Agent) -> Any:
    def route(ctx: RunContext) -> Any:
        last = ctx.last_result
        return agent if last is None or last.tool_calls else None

    return route


async def test_several_handoffs_in_one_answer_make_the_first_and_refuse_the_others() -> None:
    made: list[str] = []
    network, _triage, faq, _booking = team(
        [[call("transfer_to_seat_booking"), call("transfer_to_faq_agent")]],
        ["never asked"],
        ["Seat changed."],
        on_booking=lambda ctx: made.append("booking"),
    )

    result = await network.run("Move me and tell me about bags")

    first = result.results[0]
    assert [r.name for r in first.tool_calls] == [
        "transfer_to_seat_booking",
        "transfer_to_faq_agent",
    ]
    kept, refused = first.tool_calls
    assert not kept.is_error
    assert refused.is_error and refused.error_type == "MultipleHandoffs"
    assert "only one handoff per answer" in refused.content
    assert 0 <= refused.duration_ms < 60_000 and refused.started_at > 1e9  # never run: no time
    assert first.handoff is not None and first.handoff.target == "seat_booking"
    assert made == ["booking"]  # once
    assert [r.agent for r in result.results] == ["triage", "seat_booking"]
    assert faq.model.requests == []


async def test_a_handoff_inside_a_parallel_branch_is_refused_and_the_branch_answers() -> None:
    """A branch's handoff was made (`on_handoff` ran, the model was told "Transferred"),
    recorded and announced, then never followed: the branch ended with no answer."""
    made: list[str] = []
    billing = Agent("billing", model=ScriptedModel(["never asked"]))
    asked = ScriptedModel([call("transfer_to_billing", reason="money"), "I answer myself."])
    triage = Agent(
        "triage",
        model=asked,
        handoffs=[handoff(billing, on_handoff=lambda ctx: made.append("billing"))],
    )
    other = Agent("other", model=ScriptedModel(["Other answer."]))

    def router(ctx: RunContext) -> Any:
        return Parallel(triage, other, name="fan") if ctx.call_count == 0 else None

    network = Network("n", agents=[triage, billing, other], router=router)
    events: list[Any] = []
    async with network.stream("hi") as stream:
        async for event in stream:
            events.append(event)
    result = stream.result
    assert result is not None

    refused, answered, _other = result.results
    assert (refused.branch, answered.branch) == ("fan/triage", "fan/triage")
    (record,) = refused.tool_calls
    assert record.is_error and record.error_type == "HandoffInParallelBranch"
    assert "parallel branch 'fan/triage'" in record.content and "answer here" in record.content
    assert refused.handoff is None and answered.handoff is None
    assert answered.output[-1].content == "I answer myself."
    assert made == [] and billing.model.requests == []
    assert not [e for e in events if isinstance(e, HandoffEvent)]
    # outside a fan-out the same agent's handoff is made and followed, as ever
    triage.model = ScriptedModel([call("transfer_to_billing")])
    alone = await Network("m", agents=[triage, billing]).run("hi")
    assert [r.agent for r in alone.results] == ["triage", "billing"] and made == ["billing"]


async def test_input_filter_decides_what_the_target_sees_of_the_history_before_it() -> None:
    def check() -> str:
        """Check the booking."""
        return "booking ok"

    def lookup_seat() -> str:
        """Look the seat map up."""
        return "12A is free"

    network, _triage, _faq, booking = team(
        [call("check"), call("transfer_to_seat_booking")],
        booking_script=[call("lookup_seat"), "Seat changed."],
        input_filter=without_tool_calls,
        triage_tools=[check],
        booking_tools=[lookup_seat],
    )

    result = await network.run("Move me to 12A")

    assert [r.agent for r in result.results] == ["triage", "triage", "seat_booking", "seat_booking"]
    first, second = booking.model.requests
    # before the handoff: the user's words only (tool calls and results filtered out)
    assert [type(m) for m in first.history] == [UserMessage]
    # after it, what the booking agent did itself is sent whole
    assert [type(m) for m in second.history] == [UserMessage, AssistantMessage, ToolMessage]
    assert second.history[1].tool_calls[0].name == "lookup_seat"
    # the conversation itself is whole: the filter only shapes what the target is sent
    assert len(result.state.messages) == 8
    assert result.results[2].history == first.history  # what it was sent is what is recorded
    assert result.output == "Seat changed."


async def test_an_async_input_filter_is_awaited() -> None:
    async def last_user_message(history: list[Any]) -> list[Any]:
        return [m for m in history if m.role == "user"][-1:]

    network, _triage, _faq, booking = team(
        ["Hi!", call("transfer_to_seat_booking")],
        booking_script=["Seat changed."],
        input_filter=last_user_message,
    )
    from network import State

    state = State()
    first = await network.run("Hello", state=state)
    second = await network.run("Move me", state=first.state)

    (request,) = booking.model.requests
    assert [m.content for m in request.history] == ["Move me"]
    assert second.output == "Seat changed."


async def test_an_input_filter_that_returns_no_messages_is_a_configuration_error() -> None:
    for bad in (lambda history: "text", lambda history: [{"role": "user"}]):
        network, *_ = team(
            [call("transfer_to_seat_booking")], booking_script=["never"], input_filter=bad
        )
        with pytest.raises(ConfigurationError, match="input_filter"):
            await network.run("Move me")
    network, _, _, booking = team(
        [call("transfer_to_seat_booking")],
        booking_script=["Done."],
        input_filter=lambda history: [{"role": "user", "content": "Move me, please."}],
    )
    await network.run("Move me")
    assert booking.model.requests[0].history[0] == UserMessage("Move me, please.")


async def test_an_input_filter_that_raises_fails_the_run_naming_the_handoff() -> None:
    # Before, the run failed with the filter's bare exception (a ZeroDivisionError, a
    # KeyError), naming neither the handoff nor its agents.
    def broken(history: list[Any]) -> list[Any]:
        raise KeyError("summary")

    network, _triage, _faq, booking = team(
        [call("transfer_to_seat_booking")], booking_script=["never"], input_filter=broken
    )
    with pytest.raises(KeyError) as failed:
        await network.run("Move me")
    assert failed.value.__notes__ == [
        "in the input_filter of the handoff from 'triage' to 'seat_booking'"
    ]
    assert booking.model.requests == []  # the target was never asked
    assert [r.agent for r in failed.value.partial_result.results] == ["triage"]  # type: ignore[attr-defined]


async def test_a_code_router_sees_the_handoff_typed_and_may_override_it() -> None:
    seen: list[HandoffRecord | None] = []

    def router(ctx: RunContext) -> Any:
        seen.append(ctx.handoff)
        if ctx.call_count == 0:
            return "triage"
        if ctx.handoff is not None and ctx.handoff.target == "seat_booking":
            return "FAQ Agent"  # overrides: bookings are closed today
        return None

    network, _triage, _faq, booking = team(
        [call("transfer_to_seat_booking", reason="seat")],
        ["Bookings are closed today."],
        router=router,
    )

    result = await network.run("Move me")

    assert seen[0] is None
    assert isinstance(seen[1], HandoffRecord)
    assert (seen[1].source, seen[1].target, seen[1].reason) == ("triage", "seat_booking", "seat")
    assert [r.agent for r in result.results] == ["triage", "FAQ Agent"]
    assert booking.model.requests == []


async def test_a_router_that_returns_none_lets_the_handoff_through_and_stop_ends_it() -> None:
    def lets_through(ctx: RunContext) -> Any:
        return "triage" if ctx.call_count == 0 else None

    network, *_ = team([call("transfer_to_faq_agent")], ["Two bags."], router=lets_through)
    followed = await network.run("Bags?")
    assert [r.agent for r in followed.results] == ["triage", "FAQ Agent"]

    def stops(ctx: RunContext) -> Any:
        return "triage" if ctx.call_count == 0 else Stop(StopReason.ROUTER_DONE, "no")

    network, *_ = team([call("transfer_to_faq_agent")], ["Two bags."], router=stops)
    stopped = await network.run("Bags?")
    assert [r.agent for r in stopped.results] == ["triage"]
    assert stopped.stop_reason == StopReason.ROUTER_DONE


async def test_the_routing_agent_follows_a_handoff_without_asking_its_model() -> None:
    router_model = ScriptedModel(
        [call("select_agent", name="triage", reason="start"), call("done", summary="ok")]
    )
    network, _triage, _faq, _booking = team(
        [call("transfer_to_faq_agent")], ["Two bags."], router=routing_agent(router_model)
    )

    result = await network.run("Bags?")

    assert [r.agent for r in result.results] == ["triage", "FAQ Agent"]
    assert len(router_model.requests) == 2  # before triage, after faq: none for the handoff


async def test_the_graph_router_takes_the_handoffs_edge_whatever_its_condition() -> None:
    def never(ctx: RunContext) -> bool:
        return False

    def build(script: list[Any]) -> Any:
        network, _triage, _faq, _booking = team(script, ["Two bags."], ["Seat changed."])
        router = (
            GraphRouter(start="triage")
            .edge("triage", "FAQ Agent", when=never)
            .edge("triage", "seat_booking", when=never)
            .edge("FAQ Agent", "triage", when=never)
            .edge("seat_booking", "triage", when=never)
            .edge("FAQ Agent", END)
        )
        return Network("airline", agents=list(network.agents.values()), router=router)

    handed = await build([call("transfer_to_faq_agent")]).run("Bags?")
    assert [r.agent for r in handed.results] == ["triage", "FAQ Agent"]
    answered = await build(["I can help."]).run("Hi")
    assert [r.agent for r in answered.results] == ["triage"]  # no handoff: conditions decide


def test_a_graph_without_a_handoffs_edge_is_refused_when_the_network_is_built() -> None:
    _network, triage, faq, booking = team()
    router = (
        GraphRouter(start="triage")
        .edge("triage", "FAQ Agent")
        .edge("FAQ Agent", "triage")
        .edge("triage", END)
    )
    with pytest.raises(ConfigurationError) as refused:
        Network("airline", agents=[triage, faq, booking], router=router)
    message = str(refused.value)
    assert "'triage'" in message and "'seat_booking'" in message and "no edge" in message


def test_a_handoffs_tool_name_clash_or_a_bad_item_is_a_configuration_error() -> None:
    faq = Agent("faq")

    def transfer_to_faq() -> str:
        """Mine."""
        return "mine"

    with pytest.raises(ConfigurationError, match="transfer_to_faq"):
        Agent("triage", tools=[transfer_to_faq], handoffs=[faq])
    with pytest.raises(ConfigurationError, match="handoffs takes agents"):
        Agent("triage", handoffs=[42])
    for not_a_list in ("faq", None):  # a name alone was offered as transfer_to_f, _a and _q
        with pytest.raises(ConfigurationError, match="'triage': handoffs must be a list"):
            Agent("triage", handoffs=not_a_list)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="on_handoff must be a function"):
        handoff(faq, on_handoff="not a function")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="tool name"):
        handoff(faq, tool_name="has spaces")
    assert handoff("Billing & Refunds!").tool_name == "transfer_to_billing_refunds"
    assert len(handoff("x" * 200).tool_name) == 64


def test_a_multi_agent_network_without_router_or_handoffs_is_still_refused() -> None:
    with pytest.raises(ConfigurationError, match="no router"):
        Network("n", agents=[Agent("a"), Agent("b")])


async def test_a_streamed_run_sends_the_handoff_event_after_the_tool_result() -> None:
    network, *_ = team([call("transfer_to_faq_agent", reason="bags")], ["Two bags."])

    stream = [event async for event in network.stream("Bags?")]

    kinds = [
        e.name if e.type == "CUSTOM" else e.type
        for e in stream
        if e.type in ("CUSTOM", "TOOL_CALL_RESULT", "STEP_STARTED", "STEP_FINISHED")
    ]
    assert kinds == [
        "STEP_STARTED",
        "TOOL_CALL_RESULT",
        "Handoff",
        "STEP_FINISHED",
        "STEP_STARTED",
        "STEP_FINISHED",
    ]
    (event,) = [e for e in stream if isinstance(e, HandoffEvent)]
    tool_call = next(e for e in stream if e.type == "TOOL_CALL_START")
    assert (event.source_agent, event.target_agent, event.reason) == ("triage", "FAQ Agent", "bags")
    assert event.tool_call_id == tool_call.tool_call_id


@pytest.mark.parametrize("on_thread", [False, True])
async def test_a_handoff_beside_a_call_held_for_approval_is_followed_once_it_is_answered(
    on_thread: bool, tmp_path: Any
) -> None:
    # The model was told "Transferred to faq" when the answer was held: once the person
    # answers, the call ends there and the target has the conversation, as without approval
    @agents.tool(requires_confirmation=True)
    def refund(amount: int) -> str:
        """Refund an amount."""
        return f"refunded {amount}"

    faq = Agent("faq", model=ScriptedModel(["The refund is on its way."]))
    triage = Agent(
        "triage",
        tools=[refund],
        handoffs=[faq],
        model=ScriptedModel([[call("refund", amount=5), call("transfer_to_faq")], "never"]),
    )
    network = Network("shop", agents=[triage, faq])
    thread = ThreadRef("t1", store=str(tmp_path / "threads.db")) if on_thread else None

    stopped = await network.run("Refund me, then tell me more", thread=thread)
    assert stopped.stop_reason == StopReason.INTERRUPTED
    done = await network.run(stopped.resume([stopped.interrupts[0].accept()]), thread=thread)

    assert [result.agent for result in done.results][-2:] == ["triage", "faq"]
    assert done.results[-2].handoff == stopped.results[-1].handoff
    assert done.output == "The refund is on its way." and len(triage.model.requests) == 1
    if thread is not None:
        store = SQLStore(str(tmp_path / "threads.db"))
        assert (await store.get_thread("t1")).active_agent == "faq"
        await store.close()


@pytest.mark.parametrize("on_thread", [False, True])
async def test_a_handoff_beside_a_client_tool_call_is_followed_once_its_result_comes(
    on_thread: bool, tmp_path: Any
) -> None:
    # The stopped call made the handoff; a run continued in memory (not only on a thread)
    # starts with its target, which reads the client's result
    faq = Agent("faq", model=ScriptedModel(["You picked the 1st."]))
    triage = Agent(
        "triage",
        tools=[agents.client_tool("pick_date", "Let the user pick a date.")],
        handoffs=[faq],
        model=ScriptedModel([[call("pick_date"), call("transfer_to_faq")], "never"]),
    )
    network = Network("shop", agents=[triage, faq])
    thread = ThreadRef("t1", store=str(tmp_path / "threads.db")) if on_thread else None

    stopped = await network.run("When can I fly?", thread=thread)
    assert stopped.stop_reason == StopReason.CLIENT_TOOL
    (pending,) = stopped.pending_tool_calls
    done = await network.run(stopped.tool_results({pending.id: "2026-12-01"}), thread=thread)

    assert done.this_run[-1].agent == "faq" and done.output == "You picked the 1st."
    assert len(triage.model.requests) == 1
    assert "2026-12-01" in faq.model.requests[0].history[-1].content
