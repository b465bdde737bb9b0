"""Tools without a function (`client_tool`): their call ends the run and waits in the result."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ClientTool, ScriptedModel, call, client_tool, tool
from network import Network, StopReason, ThreadRef, UsageLimits
from network.errors import ConfigurationError
from network.history.messages import ToolMessage
from network.run.client_results import ClientToolError

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

CONFIRM = client_tool(
    "confirm_booking",
    "Ask the user to confirm.",
    {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]},
)


@tool
def find_rooms(date: str) -> str:
    """Rooms free on a date."""
    return f"room 12 on {date}"


async def test_a_client_tool_call_ends_the_run_with_the_call_pending() -> None:
    model = ScriptedModel(
        [[call("find_rooms", date="mon"), call("confirm_booking", date="mon")], "never"]
    )
    agent = Agent("concierge", tools=[find_rooms, CONFIRM], model=model)
    result = await agent.run("book a room")
    assert result.stop_reason == StopReason.CLIENT_TOOL == "client_tool"
    (pending,) = result.pending_tool_calls
    assert (pending.name, pending.arguments) == ("confirm_booking", {"date": "mon"})
    assert len(model.requests) == 1  # the run ended after that answer
    (request,) = model.requests
    assert [t["function"]["name"] for t in request.tools] == ["find_rooms", "confirm_booking"]
    assert request.tools[1]["function"]["parameters"]["required"] == ["date"]
    # the function tool of the same answer ran; the client tool's call waits for its result
    results = [m for m in result.messages if isinstance(m, ToolMessage)]
    asked = result.messages[-2].tool_calls
    assert [(m.tool_call_id, m.content) for m in results] == [(asked[0].id, "room 12 on mon")]
    assert asked[1].id == pending.id


async def test_a_run_that_calls_no_client_tool_is_unchanged() -> None:
    model = ScriptedModel(["hello"])
    result = await Agent("a", tools=[CONFIRM], model=model).run("hi")
    assert result.stop_reason == "agent_answered" and result.pending_tool_calls == []


async def test_routers_see_no_further_calls_after_a_client_tool() -> None:
    calls: list[str] = []

    def route(ctx: Any) -> Any:
        calls.append("route")
        return None if ctx.call_count else ["first", "second"]

    first = Agent(
        "first", tools=[CONFIRM], model=ScriptedModel([call("confirm_booking", date="x")])
    )
    second = Agent("second", model=ScriptedModel(["never"]))
    result = await Network("n", agents=[first, second], router=route).run("go")
    assert result.stop_reason == "client_tool" and [r.agent for r in result.results] == ["first"]


def test_client_tools_are_checked_when_declared() -> None:
    with pytest.raises(ConfigurationError, match="needs a name"):
        client_tool("")
    with pytest.raises(ConfigurationError, match="JSON Schema object"):
        ClientTool("x", "", "not a schema")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="two tools are named 'confirm_booking'"):
        Agent("a", tools=[CONFIRM, CONFIRM])


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        # a name providers refuse: the run's first model request failed (400), paid for
        (("confirm booking",), "client tool name 'confirm booking' must be 1 to 64"),
        (("x" * 65,), "must be 1 to 64 letters"),
        (("confirm", 5), "description must be a string, got int"),
        (("confirm", "", 5), "parameters must be a JSON Schema object, got int"),  # TypeError
        (("confirm", "", {"type": "object", "default": float("nan")}), "no NaN or infinity"),
    ],
)
def test_a_client_tool_a_provider_would_refuse_is_refused_when_made(
    arguments: tuple[Any, ...], said: str
) -> None:
    with pytest.raises(ConfigurationError, match=said.replace("(", r"\(")):
        client_tool(*arguments)


def concierge(model: ScriptedModel) -> Network:
    def route(ctx: Any) -> Any:
        last = ctx.last_result
        if last is None or last.tool_calls:
            return "concierge"
        return None

    return Network(
        "hotel", agents=[Agent("concierge", tools=[find_rooms, CONFIRM], model=model)], router=route
    )


def script(request: Any) -> Any:
    last = request.history[-1]
    if last.role == "tool" and last.name == "confirm_booking":
        return f"Booked ({last.content})"
    if last.role == "tool":
        return call("confirm_booking", date="mon")
    return call("find_rooms", date="mon")


async def test_answer_tool_calls_continues_with_the_clients_results() -> None:
    model = ScriptedModel(script)
    network = concierge(model)
    stopped = await network.run("book a room")
    (pending,) = stopped.pending_tool_calls
    result = await network.run(stopped.tool_results({pending.id: {"confirmed": True}}))
    assert result.stop_reason == "router_finished"
    assert result.output == 'Booked ({"confirmed": true})'
    last = model.requests[-1].history
    assert [m.role for m in last] == ["user", "assistant", "tool", "assistant", "tool"]
    assert last[-1].tool_call_id == pending.id and last[-2].tool_calls[0].id == pending.id


async def test_answer_tool_calls_on_a_saved_thread(tmp_path: Any) -> None:
    store = str(tmp_path / "threads.db")
    model = ScriptedModel(script)
    stopped = await concierge(model).run("book a room", thread=ThreadRef("t1", store=store))
    assert stopped.persisted and stopped.stop_reason == "client_tool"
    (pending,) = stopped.pending_tool_calls
    # a new process: a fresh network object on the same store
    result = await concierge(model).run(
        stopped.tool_results({pending.id: "yes"}), thread=ThreadRef(stopped.thread_id, store=store)
    )
    assert result.output == "Booked (yes)"
    again = await concierge(ScriptedModel(["hello again"])).run(
        "hi", thread=ThreadRef("t1", store=store)
    )
    tools = [m for m in again.messages if isinstance(m, ToolMessage)]
    assert [m.content for m in tools] == ["room 12 on mon", "yes"]  # the answer was saved


async def test_answers_must_match_the_pending_calls() -> None:
    model = ScriptedModel(script)
    network = concierge(model)
    stopped = await network.run("book a room")
    (pending,) = stopped.pending_tool_calls
    with pytest.raises(ClientToolError, match="no result for pending tool call .*confirm_booking"):
        await network.run(stopped.tool_results({}))
    with pytest.raises(ClientToolError, match="no pending tool call 'call_nope'"):
        await network.run(stopped.tool_results({pending.id: "yes", "call_nope": "x"}))
    finished = await network.run(stopped.tool_results({pending.id: "yes"}))
    with pytest.raises(ClientToolError, match="did not stop on a client tool call"):
        await network.run(finished.tool_results({pending.id: "yes"}))
    assert len(model.requests) == 3  # the refused answers ran nothing


def booking_network(limits: Any = None) -> tuple[Network, ScriptedModel]:
    """A concierge that asks the client to confirm, then needs two more requests to finish."""
    model = ScriptedModel(
        [[call("confirm_booking", date="mon")], [call("find_rooms", date="mon")], "booked"]
    )
    agent = Agent("concierge", tools=[find_rooms, CONFIRM], model=model)

    def route(ctx: Any) -> Any:
        done = ctx.results and ctx.results[-1].output == "booked"
        return None if done else "concierge"

    return Network("n", agents=[agent], router=route, limits=limits), model


async def test_answering_client_tool_calls_keeps_the_networks_default_limits() -> None:
    network, model = booking_network(UsageLimits(max_model_calls=1))
    stopped = await network.run("book a room")
    (pending,) = stopped.pending_tool_calls
    # The continuation needs two agent calls (two requests); the network allows one per run.
    result = await network.run(stopped.tool_results({pending.id: "yes"}))
    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert result.limit_exceeded is not None
    assert result.limit_exceeded.limit == "max_model_calls"
    assert len(model.requests) == 2


async def test_answering_client_tool_calls_takes_limits_like_run_and_resume() -> None:
    network, model = booking_network()  # no limits of its own
    stopped = await network.run("book a room")
    (pending,) = stopped.pending_tool_calls
    not_limits: Any = {"max_model_calls": 1}
    with pytest.raises(ConfigurationError, match="limits must be UsageLimits"):
        await network.run(stopped.tool_results({pending.id: "yes"}), limits=not_limits)
    assert len(model.requests) == 1  # a refused call runs nothing

    result = await network.run(
        stopped.tool_results({pending.id: "yes"}), limits=UsageLimits(max_model_calls=1)
    )
    assert result.stop_reason == StopReason.USAGE_LIMIT
    assert result.limit_exceeded is not None
    assert (result.limit_exceeded.limit, result.limit_exceeded.actual) == ("max_model_calls", 1)
    assert len(model.requests) == 2
