"""Agents and networks as tools (`agents.tools._subrun`): a supervisor's tool runs a sub-run.

Each test shows one thing a user relies on: the answer comes back as the tool result, the
sub-run's state is its own unless mapped, its spending is the caller's, cancelling the caller
cancels it, and a confirmation inside it is answered through the caller, once.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, Tool
from network import Network, StopReason, ToolError, UsageLimits
from network.errors import ConfigurationError
from tests.agents.capabilities.subagents.subagents import (
    REFUNDS,
    RESEARCHED,
    billing_network,
    research_team,
    researcher,
    supervised,
    supervisor_script,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _clean() -> None:
    REFUNDS.clear()
    RESEARCHED.clear()


async def test_an_agent_as_a_tool_answers_the_supervisor() -> None:
    tool = researcher().as_tool(description="Ask the researcher.")
    assert isinstance(tool, Tool)
    assert tool.name == "researcher"
    assert tool.schema["function"]["description"] == "Ask the researcher."
    assert list(tool.schema["function"]["parameters"]["properties"]) == ["input"]
    boss = ScriptedModel(supervisor_script("researcher", "tides"))
    result = await supervised([tool], boss).run("What about tides?")
    assert result.output == "Supervisor: Research says tides: found"
    assert RESEARCHED == ["tides"]
    # the supervisor's model read the sub-agent's answer as the tool's result
    assert boss.requests[-1].history[-1].content == "Research says tides: found"


async def test_the_sub_run_state_is_its_own_unless_mapped() -> None:
    tool = researcher().as_tool(name="ask", state_in={"topic": "subject"})
    network = supervised(
        [tool],
        ScriptedModel(supervisor_script("ask", "moon")),
        state_schema={"subject": {"type": str}, "notes": {"type": list[str]}},
    )
    result = await network.run("Go", state={"subject": "moon", "notes": ["mine"]})
    assert result.state.kv.get("notes") == ["mine"]  # the sub-run's `notes` stayed there
    assert RESEARCHED == ["moon"]


async def test_state_out_writes_through_the_callers_schema() -> None:
    tool = researcher().as_tool(name="ask", state_out={"found": "notes"})
    network = supervised(
        [tool],
        ScriptedModel(supervisor_script("ask", "sun")),
        state_schema={"found": {"type": list[str]}},
    )
    result = await network.run("Go", state={"found": ["earlier"]})
    assert result.state.kv.get("found") == ["earlier", "sun: found"]  # merged like any write


async def test_a_state_out_write_the_schema_refuses_is_an_error_result() -> None:
    tool = researcher().as_tool(name="ask", state_out={"count": "notes"})
    boss = ScriptedModel(supervisor_script("ask", "sun"))
    network = supervised([tool], boss, state_schema={"count": {"type": int}})
    result = await network.run("Go", state={"count": 3})
    assert result.state.kv.get("count") == 3  # left as it was
    record = result.state.results[0].tool_calls[0]
    assert record.is_error and "count" in record.content
    # Before: "agent 'researcher' failed: state key 'count' expects int", which a model reads
    # as the delegate's failure, and delegates again (its tools running twice).
    assert record.content.startswith(
        "Error: agent 'researcher' answered, but the caller's state refused its 'notes' as "
        "'count' (state_out): state key 'count' expects int"
    )
    assert record.content.endswith("; none of its state_out was written")
    assert RESEARCHED == ["sun"]


def test_bad_mappings_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="state_in"):
        researcher().as_tool(state_in={"topic": 3})  # type: ignore[dict-item]
    with pytest.raises(ConfigurationError, match="state_out"):
        Network("n", agents=[researcher()]).as_tool(state_out=["x"])  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="limits"):
        researcher().as_tool(limits={"max_model_calls": 1})  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["bad name!", "", "x" * 65, "caf\u00e9", 3])
def test_an_as_tool_name_providers_refuse_is_refused_when_the_tool_is_made(name: object) -> None:
    """`as_tool(name="bad name!")` was accepted and refused by the provider (a 400) at the
    supervisor's first request; the rule is `@tool(name=...)`'s (`network.run.tool_names`)."""
    with pytest.raises(ConfigurationError, match=r"agent 'researcher': as_tool name .* must be 1 "):
        researcher().as_tool(name=name)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"network 'n': as_tool name .* must be 1 to 64"):
        Network("n", agents=[researcher()]).as_tool(name=name)  # type: ignore[arg-type]


@pytest.mark.parametrize("schema", [3, "str", {"topic": 3}, {"topic": {"handler": None}}])
def test_a_bad_state_schema_is_refused_when_the_tool_is_made(schema: object) -> None:
    """`as_tool(state_schema=3)` was accepted, then every call was an error result naming no
    agent (the sub-run's network is built per call); as `max_steps`, it is checked here."""
    with pytest.raises(ConfigurationError, match=r"agent 'researcher': as_tool state_schema: "):
        researcher().as_tool(state_schema=schema)


def test_a_good_state_schema_is_the_sub_runs() -> None:
    tool = researcher().as_tool(state_schema={"topic": {"type": str}})
    assert tool.name == "researcher"


def test_an_as_tool_name_providers_accept_is_kept() -> None:
    assert researcher().as_tool(name="ask-the_Researcher2").name == "ask-the_Researcher2"
    assert Network("n", agents=[researcher()]).as_tool(name="team").name == "team"
    assert Agent("Research Agent").as_tool(name="research", description="d").name == "research"


@pytest.mark.parametrize("own_name", ["Research Agent", "caf\u00e9", "x" * 65, "a.b"])
def test_an_own_name_providers_refuse_is_refused_when_the_tool_takes_it(own_name: str) -> None:
    """`Agent("Research Agent").as_tool()` was a tool named "Research Agent", which the
    provider refused (a 400) at the supervisor's first request, after the run was admitted;
    the tool's name is checked when it is made, whether given or the agent's own."""
    with pytest.raises(ConfigurationError, match=r"give as_tool\(name=\.\.\.\)") as refused:
        Agent(own_name, description="d").as_tool()
    assert str(refused.value).startswith(f"agent {own_name!r}: its name is not a tool name")
    with pytest.raises(ConfigurationError, match=rf"^network {own_name!r}: its name is not a"):
        Network(own_name, agents=[researcher()]).as_tool()


@pytest.mark.parametrize(
    ("option", "mapping"),
    [("state_in", {"topic\ud800": "topic"}), ("state_out", {"answer": "answer\x00"})],
)
def test_a_mapping_through_a_key_no_store_can_keep_is_refused_when_made(
    option: str, mapping: dict[str, str]
) -> None:
    """Such a key is refused at every write (and never has a value to read): the mapping failed
    at every call, as the model's error, or copied nothing; now refused when the tool is made."""
    with pytest.raises(ConfigurationError, match=rf"{option}: state key .* NUL or a lone surr"):
        researcher().as_tool(**{option: mapping})


@pytest.mark.parametrize(
    ("option", "mapping"),
    [
        ("state_out", {"messages": "answer"}),
        ("state_out", {"answer": "last_message"}),
        ("state_in", {"last_message": "topic"}),
        ("state_in", {"topic": "messages"}),
    ],
)
def test_a_mapping_through_the_conversations_name_is_refused_when_made(
    option: str, mapping: dict[str, str]
) -> None:
    """ADK's AgentTool / the Agents SDK's as_tool: `messages` and `last_message` are never state
    keys (docs/coming-from-haystack.md), so a mapping through one could only fail, at every
    call, as the model's error; it is refused when the tool is made, naming the key."""
    key = next(k for pair in mapping.items() for k in pair if k in ("messages", "last_message"))
    with pytest.raises(ConfigurationError, match=rf"{option}: state key '{key}' is the conv"):
        researcher().as_tool(**{option: mapping})
    with pytest.raises(ConfigurationError, match=rf"{option}: state key '{key}' is the conv"):
        Network("n", agents=[researcher()]).as_tool(**{option: mapping})


async def test_a_network_as_a_tool() -> None:
    team = research_team()
    boss = ScriptedModel(supervisor_script("research", "stars"))
    result = await supervised([team.as_tool(description="The research team.")], boss).run("Go")
    assert result.output == "Supervisor: Research says stars: found"


async def test_usage_rolls_up_into_the_callers_totals() -> None:
    boss = ScriptedModel(supervisor_script("researcher", "tides"))
    result = await supervised([researcher().as_tool()], boss).run("Go")
    own = sum(r.usage.total_tokens for r in result.state.results)
    inner = await researcher().run("tides")
    assert inner.usage.total_tokens > 0
    assert result.usage.total_tokens == own + inner.usage.total_tokens


async def test_a_sub_run_cannot_spend_past_the_callers_limit() -> None:
    helper_model = ScriptedModel(lambda request: __import__("agents").call("look_up", topic="x"))
    helper = researcher(helper_model)  # never answers: looks up again and again
    boss = ScriptedModel(supervisor_script("researcher", "loop"))
    network = supervised([helper.as_tool(max_steps=50)], boss)
    seen: list[Any] = []
    result = await network.run("Go", limits=UsageLimits(max_model_calls=4), sinks=[seen.append])
    assert result.stop_reason == StopReason.USAGE_LIMIT
    closed = [e for e in seen if e.type in ("SUBAGENT_FINISHED", "SUBAGENT_ERROR")]
    assert [e.type for e in closed] == ["SUBAGENT_ERROR"]  # the client is told it ended
    # one request of the supervisor, three of the helper: never more than the limit
    assert len(boss.requests) + len(helper_model.requests) == 4
    assert len(helper_model.requests) == 3
    record = result.state.results[0].tool_calls[0]
    assert record.is_error and "usage limit" in record.content


async def test_cancelling_the_caller_cancels_the_sub_run() -> None:
    started = anyio.Event()
    finished: list[str] = []

    async def slow(request: Any) -> Any:
        started.set()
        await anyio.sleep(30)
        finished.append("answered")  # a side effect that must never happen
        return "late"

    boss = ScriptedModel(supervisor_script("researcher", "slowly"))
    network = supervised([researcher(ScriptedModel(slow)).as_tool()], boss)
    with anyio.move_on_after(5) as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(network.run, "Go")
            await started.wait()
            group.cancel_scope.cancel()
    assert not scope.cancelled_caught  # cancelled at once, not after the 5 s
    await anyio.sleep(0.05)
    assert finished == []


async def test_an_approval_inside_surfaces_and_resumes_through_the_caller() -> None:
    boss = ScriptedModel(supervisor_script("billing", "refund order 7"))
    network = supervised([billing_network().as_tool(description="Billing.")], boss)
    stopped = await network.run("Refund order 7")
    assert stopped.stop_reason == StopReason.INTERRUPTED
    (interrupt,) = stopped.interrupts
    assert interrupt.tool == "billing" and interrupt.agent == "boss"
    assert interrupt.subagent_run_id is not None
    assert interrupt.to_agui()["metadata"]["tool"] == "refund"  # what waits, inside
    assert REFUNDS == []
    done = await network.run(stopped.resume([interrupt.accept()]))
    assert done.output == "Supervisor: Billing: refunded 30"
    assert REFUNDS == [30]  # ran once, after the approval


@pytest.mark.parametrize("delegate", ["network", "agent", "two levels"])
async def test_a_bad_edit_of_a_call_inside_is_refused_before_the_answer_is_spent(
    delegate: str,
) -> None:
    """An edited approval of a call held inside a delegate is checked against the delegate's
    tool as a call of the run's own is: refused with `InterruptError` naming the field, the
    interrupt still pending, and a good edit then runs the tool once (before, the bad edit
    was spent: the delegate failed, the supervisor went on, and the refund never ran)."""
    from network import InterruptError

    billing: Any = billing_network()
    if delegate == "agent":
        billing = billing.agents["clerk"].as_tool(name="billing")
    elif delegate == "two levels":
        inner = supervised([billing.as_tool()], ScriptedModel(supervisor_script("billing", "7")))
        billing = inner.as_tool(name="billing")
    else:
        billing = billing.as_tool()
    network = supervised([billing], ScriptedModel(supervisor_script("billing", "refund 7")))
    stopped = await network.run("Refund order 7")
    (interrupt,) = stopped.interrupts
    with pytest.raises(InterruptError, match="'refund'.*amount"):
        await network.run(stopped.resume([interrupt.accept(arguments={"amount": "lots"})]))
    assert REFUNDS == []
    done = await network.run(stopped.resume([interrupt.accept(arguments={"amount": 12})]))
    assert REFUNDS == [12] and done.output is not None and "refunded 12" in done.output


async def test_a_rejection_inside_is_told_to_the_sub_agent() -> None:
    boss = ScriptedModel(supervisor_script("billing", "refund order 7"))
    network = supervised([billing_network().as_tool()], boss)
    stopped = await network.run("Refund order 7")
    done = await network.run(stopped.resume([stopped.interrupts[0].reject("too much")]))
    assert REFUNDS == []
    assert done.output is not None and "rejected" in done.output
    assert "too much" in done.output


def test_an_agent_given_a_network_as_tool_gets_a_tool() -> None:
    team = Network("research", agents=[researcher()])
    agent = Agent("boss", tools=[team.as_tool()])
    assert isinstance(agent.tools["research"], Tool)


async def test_an_approval_inside_survives_on_a_sqlite_thread_and_is_answered_once(
    tmp_path: Any,
) -> None:
    from network import AlreadyAnsweredError, Resume, ThreadRef

    path = str(tmp_path / "threads.db")

    def desk() -> Network:  # a fresh network each time: another process, as far as it knows
        boss = ScriptedModel(supervisor_script("billing", "refund order 7"))
        return supervised([billing_network().as_tool()], boss)

    stopped = await desk().run("Refund order 7", thread=ThreadRef("t1", store=path))
    assert stopped.stop_reason == StopReason.INTERRUPTED and stopped.persisted
    (waiting,) = stopped.interrupts
    # answered by thread id alone, from the stored interrupt
    done = await desk().run(Resume([waiting.accept()]), thread=ThreadRef("t1", store=path))
    assert done.output == "Supervisor: Billing: refunded 30"
    with pytest.raises(AlreadyAnsweredError):
        await desk().run(Resume([waiting.accept()]), thread=ThreadRef("t1", store=path))
    assert REFUNDS == [30]  # the inner tool ran exactly once


async def collect(network: Network, input: Any, **options: Any) -> tuple[Any, list[Any]]:
    seen: list[Any] = []

    async def sink(event: Any) -> None:
        seen.append(event)

    return await network.run(input, sinks=[sink], **options), seen


async def test_a_failing_sub_agent_reports_an_error_and_the_supervisor_goes_on() -> None:
    from network.errors import ModelError

    broken = researcher(ScriptedModel([ModelError("provider down")]))
    boss = ScriptedModel(supervisor_script("researcher", "tides"))
    result, seen = await collect(supervised([broken.as_tool()], boss), "Go")
    assert result.output is not None and "provider down" in result.output  # the model read it
    types = [event.type for event in seen]
    assert "RUN_ERROR" not in types and types[-1] == "RUN_FINISHED"
    (started,) = [e for e in seen if e.type == "SUBAGENT_STARTED"]
    (failed,) = [e for e in seen if e.type == "SUBAGENT_ERROR"]
    assert failed.subagent_run_id == started.subagent_run_id
    assert "provider down" in failed.message and failed.code == "ModelError"
    inside = seen[types.index("SUBAGENT_STARTED") + 1 : types.index("SUBAGENT_ERROR")]
    assert inside and all(e.subagent_run_id == started.subagent_run_id for e in inside)


async def test_a_cancelled_sub_agent_is_closed_before_the_run_ends() -> None:
    started = anyio.Event()

    async def slow(request: Any) -> Any:
        started.set()
        await anyio.sleep(30)
        return "late"

    boss = ScriptedModel(supervisor_script("researcher", "slowly"))
    network = supervised([researcher(ScriptedModel(slow)).as_tool()], boss)
    seen: list[Any] = []

    async def sink(event: Any) -> None:
        seen.append(event)

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: network.run("Go", sinks=[sink]))
        await started.wait()
        group.cancel_scope.cancel()
    types = [event.type for event in seen]
    assert types.index("SUBAGENT_STARTED") < types.index("SUBAGENT_ERROR")
    assert types[-1] == "RUN_FINISHED" and seen[-1].outcome.type == "cancelled"
    assert next(e for e in seen if e.type == "SUBAGENT_ERROR").message == "cancelled"


async def test_run_finished_reports_the_sub_runs_usage_too() -> None:
    boss = ScriptedModel(supervisor_script("researcher", "tides"))
    result, seen = await collect(supervised([researcher().as_tool()], boss), "Go")
    finished = seen[-1]
    assert finished.type == "RUN_FINISHED"
    reported = sum(entry.total_tokens for entry in finished.usage)
    assert reported == result.usage.total_tokens
    own = sum(r.usage.total_tokens for r in result.state.results)
    inner = result.usage.total_tokens - own
    assert inner > 0
    # the sub-run's requests are reported by model (it records each one)
    assert sum(e.total_tokens for e in finished.usage if e.model == "scripted") == inner


async def test_a_sub_runs_steps_are_logged_once_under_its_own_run_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    import structlog

    structlog.reset_defaults()
    caplog.set_level(logging.INFO, logger="agent_network")
    boss = ScriptedModel(supervisor_script("researcher", "tides"))
    await supervised([researcher().as_tool()], boss).run("Go")
    lines = [r.getMessage() for r in caplog.records if r.name == "agent_network"]
    inner = [line for line in lines if line.startswith("agent.started") and "researcher" in line]
    assert len(inner) == 2  # its two calls, not twice each
    assert len({line.split("run_id=")[1].split()[0] for line in inner}) == 1
    structlog.reset_defaults()


def _delegation(result: Any) -> Any:
    (record,) = [r for res in result.results for r in res.tool_calls]
    return record


async def test_a_guardrail_trip_inside_is_an_error_result_naming_the_guardrail() -> None:
    # Before, the sub-run stopped on the trip and the supervisor's model read an empty tool
    # result, a success: it went on as if the delegate had answered.
    from agents import GuardrailResult, output_guardrail

    @output_guardrail
    def no_secrets(ctx: Any, answer: str) -> GuardrailResult:
        return GuardrailResult.trip({"why": "a secret"})

    guarded = Agent(
        "researcher", model=ScriptedModel(["the secret"]), output_guardrails=[no_secrets]
    )
    boss = ScriptedModel(supervisor_script("researcher", "tides"))
    result, seen = await collect(supervised([guarded.as_tool()], boss), "Go")
    record = _delegation(result)
    assert record.is_error and record.error_type == "ToolError"
    assert "agent 'researcher' stopped: output guardrail 'no_secrets' tripped" in record.content
    assert "a secret" not in record.content and "the secret" not in record.content
    (failed,) = [e for e in seen if e.type == "SUBAGENT_ERROR"]
    assert "no_secrets" in failed.message
    assert result.stop_reason == StopReason.ROUTER_FINISHED  # the supervisor answered


async def test_a_delegate_still_calling_tools_at_its_cap_is_an_error_result() -> None:
    # Before, an agent that reached max_steps still asking for tools (or a network its
    # max_iter) was an empty or half-done tool result the model read as the answer; a
    # Parallel branch in that state fails with MaxStepsExceeded.
    from agents import call

    looping = researcher(ScriptedModel(lambda request: call("look_up", topic="x")))
    boss = ScriptedModel(supervisor_script("researcher", "tides"))
    result = await supervised([looping.as_tool(max_steps=2)], boss).run("Go")
    record = _delegation(result)
    assert record.is_error and "agent 'researcher' stopped before it finished: it reached its " \
        "max_steps of 2 calls" in record.content  # fmt: skip
    chatty = Agent("chatty", model=ScriptedModel(["still talking"], repeat_last=True))
    team = Network("team", agents=[chatty], router=lambda ctx: chatty, max_iter=2)
    boss = ScriptedModel(supervisor_script("team", "tides"))
    result = await supervised([team.as_tool()], boss).run("Go")
    assert "network 'team' stopped before it finished: it reached its max_iter of 2" in (
        _delegation(result).content
    )
    strict = looping.as_tool(max_steps=2, on_failure="raise")
    with pytest.raises(ToolError, match="reached its max_steps of 2"):
        await supervised([strict], ScriptedModel(supervisor_script("researcher", "x"))).run("Go")
