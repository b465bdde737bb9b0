"""AG-UI events of a fan-out: every event a branch emits carries its branch id (in its
`metadata`); the merged state is streamed once, at the join, inside the fan-out's own step."""

from __future__ import annotations

from typing import Any

import pytest

from network import Network, Parallel
from tests.network.parallel.helpers import text_agent, writer_agent

pytestmark = pytest.mark.anyio


async def test_branch_events_carry_the_branch_and_state_streams_at_the_join() -> None:
    a = writer_agent("a", {"found": ["a"]}, delay=0.01)
    b = text_agent("b", "b speaks")

    def router(ctx: Any) -> Any:
        return Parallel(a, b, name="pair") if ctx.call_count == 0 else None

    network = Network(
        "n", agents=[a, b], router=router, state_schema={"found": {"type": list[str]}}
    )
    events = []
    async with network.stream("go") as stream:
        async for event in stream:
            events.append(event)

    kinds = [(e.type.value, (e.metadata or {}).get("branch")) for e in events]
    fork_start = kinds.index(("STEP_STARTED", None))
    fork_end = kinds.index(("STEP_FINISHED", None))
    assert events[fork_start].step_name == events[fork_end].step_name == "pair"
    inside = kinds[fork_start + 1 : fork_end]
    branch_events = [k for k in inside if k[0] != "STATE_DELTA"]
    assert {branch for _, branch in branch_events} == {"pair/a", "pair/b"}
    assert ("TEXT_MESSAGE_START", "pair/b") in branch_events
    assert ("TOOL_CALL_START", "pair/a") in branch_events
    assert ("STEP_FINISHED", "pair/a") in branch_events
    # the state changes once, merged, after both branches finished
    deltas = [i for i, k in enumerate(inside) if k[0] == "STATE_DELTA"]
    assert len(deltas) == 1
    assert deltas[0] > max(i for i, k in enumerate(inside) if k[0] == "STEP_FINISHED")
    delta = events[fork_start + 1 + deltas[0]].model_dump(mode="json")["delta"]
    assert delta == [{"op": "add", "path": "/found", "value": ["a"]}]
    # the branch travels on the wire too, in the event's metadata (AG-UI's place for it)
    wire = next(e for e in events if e.type.value == "TEXT_MESSAGE_START")
    assert '"metadata":{"branch":"pair/b"}' in wire.model_dump_json(by_alias=True)
    fork = events[fork_start].model_dump(mode="json", by_alias=True, exclude_none=True)
    assert fork["metadata"] == {"fanOut": "pair"}


def _open_steps(events: list[Any]) -> list[tuple[str, str, Any]]:
    """The steps started and never finished, and those finished without a start, as
    ("open" | "unmatched", name, metadata): AG-UI pairs each STEP_STARTED with a
    STEP_FINISHED of the same step before the run ends."""
    open_steps: list[tuple[str, str, Any]] = []
    unmatched: list[tuple[str, str, Any]] = []
    for event in events:
        step = ("open", event.step_name, event.metadata) if "STEP" in event.type.value else None
        if event.type.value == "STEP_STARTED":
            open_steps.append(step)  # type: ignore[arg-type]
        elif event.type.value == "STEP_FINISHED":
            if step in open_steps:
                open_steps.remove(step)  # type: ignore[arg-type]
            else:
                unmatched.append(("unmatched", event.step_name, event.metadata))
    return open_steps + unmatched


def _failing(name: str) -> Any:
    from agents import Agent, ScriptedModel
    from network import ModelError

    return Agent(name, model=ScriptedModel([ModelError("provider down", model="m")]))


async def test_a_failed_branchs_step_is_finished_under_continue_naming_the_branch() -> None:
    """Under `on_error="continue"` the run goes on after a branch failed: its step was left
    open (a STEP_STARTED never finished, an AG-UI stream a client refuses)."""
    ok, bad = text_agent("ok", "fine"), _failing("bad")
    after = text_agent("after", "next")

    def router(ctx: Any) -> Any:
        if ctx.call_count == 0:
            return Parallel(ok, bad, name="pair", on_error="continue")
        return after if ctx.call_count == 2 else None

    events: list[Any] = []
    await Network("n", agents=[ok, bad, after], router=router).run("go", sinks=[events.append])

    assert _open_steps(events) == []
    finished = [(e.step_name, e.metadata) for e in events if e.type.value == "STEP_FINISHED"]
    assert ("bad", {"branch": "pair/bad"}) in finished
    assert finished.index(("bad", {"branch": "pair/bad"})) < finished.index(
        ("pair", {"fanOut": "pair"})
    )


async def test_a_failing_fan_outs_steps_are_finished_with_their_branch_and_fan_out() -> None:
    """Under `on_error="fail"` the run ends with the branch's error: the steps it leaves
    open are finished as they were started, the branch's naming its branch, the fan-out's
    naming the fan-out (they were finished with no metadata, the branch unknown)."""
    import anyio

    from network import ModelError

    slow, bad = text_agent("slow", "late", delay=1.0), _failing("bad")

    def router(ctx: Any) -> Any:
        return Parallel(slow, bad, name="pair") if ctx.call_count == 0 else None

    events: list[Any] = []
    with anyio.fail_after(5), pytest.raises(ModelError):
        await Network("n", agents=[slow, bad], router=router).run("go", sinks=[events.append])

    assert _open_steps(events) == []
    assert events[-1].type.value == "RUN_ERROR"


async def test_a_sub_agents_error_inside_a_branch_names_the_branch() -> None:
    """SUBAGENT_ERROR goes to each sink on its own (a client that left is told nothing):
    it went past the branch's emitter, so it was the one event of a branch without it."""
    from agents import Agent, ScriptedModel, call

    helper = _failing("helper")
    boss = Agent(
        "boss",
        tools=[helper.as_tool()],
        model=ScriptedModel(
            lambda r: "told" if r.history[-1].role == "tool" else call("helper", input="go")
        ),
    )
    other = text_agent("other", "fine")

    def router(ctx: Any) -> Any:
        return Parallel(boss, other, name="pair") if ctx.call_count == 0 else None

    events: list[Any] = []
    await Network("n", agents=[boss, other], router=router).run("go", sinks=[events.append])
    (error,) = [e for e in events if e.type.value == "SUBAGENT_ERROR"]
    assert error.metadata == {"branch": "pair/boss"}


async def test_a_branchs_stop_closes_its_own_messages_not_a_siblings() -> None:
    """A guardrail's trip in one branch closed every message open in the run, a sibling's
    that was still streaming among them (an END with no branch, then the sibling's own
    END: twice for one message)."""
    import anyio

    from agents import Agent, GuardrailResult, ScriptedModel, output_guardrail

    @output_guardrail
    def refuse(ctx: Any, output: Any) -> GuardrailResult:
        return GuardrailResult(tripped=True)

    tripping = Agent("tripping", output_guardrails=[refuse], model=ScriptedModel(["short"]))
    streaming = Agent(
        "streaming", model=ScriptedModel(["a long answer in many chunks"], chunk_size=4)
    )
    events: list[Any] = []

    async def slow_client(event: Any) -> None:  # the sibling's message stays open meanwhile
        events.append(event)
        if event.type.value == "TEXT_MESSAGE_CONTENT" and event.metadata == {
            "branch": "pair/streaming"
        }:
            await anyio.sleep(0.01)

    def router(ctx: Any) -> Any:
        return Parallel(tripping, streaming, name="pair") if ctx.call_count == 0 else None

    network = Network("n", agents=[tripping, streaming], router=router)
    await network.run("go", sinks=[slow_client])

    started = {e.message_id: e.metadata for e in events if e.type.value == "TEXT_MESSAGE_START"}
    ended = [(e.message_id, e.metadata) for e in events if e.type.value == "TEXT_MESSAGE_END"]
    assert sorted(map(repr, ended)) == sorted(map(repr, started.items()))  # once, named
