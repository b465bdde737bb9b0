"""`network.replay`: every recorded run of a thread replayed in turn, on each store, without
touching the recorded thread; bad input refused by name; an LLM router replayed from the
recording; a replayed run that fails reported as such."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call
from network import (
    ConfigurationError,
    ModelError,
    Network,
    StateError,
    StateSchema,
    StateValidationError,
    ThreadRef,
    UnstorableValueError,
)
from network.capabilities.replay import RecordedRouter
from network.threads import MemoryStore
from network.threads.protocol import ThreadNotFoundError
from routers import routing_agent
from tests.network.capabilities.replay.teams import CODER, TASK, Counts, codegen

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


async def test_a_thread_of_two_runs_replays_run_by_run_on_every_store(store: Any) -> None:
    network = codegen()
    ref = ThreadRef("t", user_id="alice", store=store)
    await network.run(TASK, thread=ref, state={"user:lang": "en"})
    await network.run("Now add sub(a, b).", thread=ref)
    before = await store.get_thread("t")
    counts = Counts()
    report = await codegen(counts).replay(ref, tools="recorded")
    assert [(s.turn, s.index, s.status) for s in report.steps] == [
        (turn, index, "match") for turn in (0, 1) for index in range(5)
    ]
    assert report.stop_reasons == ["router_finished", "router_finished"]
    assert counts.requests == {} and counts.tools == {}
    after = await store.get_thread("t")
    assert after.revision == before.revision and len(after.results) == 10  # untouched
    data = report.to_dict()
    assert data["diverged"] is False and data["matched"] == 10
    assert data["steps"][6]["agent"] == "coder" and data["steps"][6]["turn"] == 1


async def test_the_second_run_diverges_when_only_it_reads_what_changed(store: Any) -> None:
    ref = ThreadRef("t", store=store)
    await codegen().run(TASK, thread=ref)
    await codegen().run("Again.", thread=ref)
    changed = codegen(coder_prompt=CODER + "\nKeep it short.")
    report = await changed.replay(ref, on_divergence="continue", tools="recorded")
    assert {s.status for s in report.steps if s.agent == "coder"} == {"diverged"}
    assert {s.status for s in report.steps if s.agent != "coder"} == {"match"}


async def test_bad_options_and_unknown_threads_are_refused_by_name() -> None:
    store = MemoryStore()
    await codegen().run(TASK, thread=ThreadRef("t", store=store))
    network = codegen()
    for options, named in (
        ({"tools": "cached"}, "tools"),
        ({"on_divergence": "ignore"}, "on_divergence"),
        ({"routing": "llm"}, "routing"),
        ({"state": ["files"]}, "state"),
    ):
        with pytest.raises(ConfigurationError, match=named):
            await network.replay(ThreadRef("t", store=store), **options)
    with pytest.raises(ThreadNotFoundError, match="'nope'"):
        await network.replay(ThreadRef("nope", store=store))
    with pytest.raises(ThreadNotFoundError, match="user 'bob'"):
        await network.replay(ThreadRef("t", user_id="bob", store=store))
    other = Network("other", agents=[Agent("a", model=ScriptedModel(["x"]))])
    with pytest.raises(ThreadNotFoundError, match="app 'other'"):
        await other.replay(ThreadRef("t", store=store))
    await store.create_thread("empty", app_name="codegen")
    with pytest.raises(ConfigurationError, match="nothing to replay"):
        await network.replay(ThreadRef("empty", store=store))


async def test_a_state_the_schema_refuses_is_raised_naming_the_key_before_anything_runs() -> None:
    # the caller's `state=` is input, not a replayed run that failed: raised, not reported
    store = MemoryStore()
    ref = ThreadRef("t", store=store)
    await codegen().run(TASK, thread=ref)
    before = await store.get_thread("t")
    counts = Counts()
    network = codegen(counts)
    schema = StateSchema({"plan": {"type": str}, "user:lang": {"type": str}}, closed=True)
    planner = Agent("planner", model=ScriptedModel(["a plan"]))
    closed = Network("codegen", agents=[planner], state_schema=schema)
    for replaying, state, error, key in (
        (network, {"plan": 5}, StateValidationError, "plan"),
        (network, {"user:lang": "en", "files": ["a.py"]}, StateValidationError, "files"),
        (network, {"user:x": object()}, UnstorableValueError, "user:x"),
        (network, {"user:\ud800": 1}, StateError, "user:\ud800"),
        (closed, {"user:lang": "en", "bogus": 1}, StateError, "bogus"),
    ):
        with pytest.raises(error) as refused:
            await replaying.replay(ref, tools="recorded", state=state)
        assert refused.value.key == key
    assert counts.requests == {} and counts.tools == {}
    after = await store.get_thread("t")
    assert after.revision == before.revision
    report = await network.replay(ref, tools="recorded", state={"user:lang": "en"})
    assert report.error is None and report.stop_reasons == ["router_finished"]


def routed(router_model: Any) -> Network:
    planner = Agent("planner", model=ScriptedModel(lambda request: "a plan"))
    coder = Agent("coder", model=ScriptedModel(lambda request: "the code"))
    return Network("routed", agents=[planner, coder], router=routing_agent(model=router_model))


async def test_an_llm_router_is_replayed_from_the_recording_without_its_model() -> None:
    store = MemoryStore()
    choices = [
        call("select_agent", name="planner", reason="plan first"),
        call("select_agent", name="coder", reason="now code"),
        call("done", summary="done"),
    ]
    await routed(ScriptedModel(choices)).run(TASK, thread=ThreadRef("t", store=store))
    silent = ScriptedModel([ModelError("the router's model must not be asked")])
    replaying = routed(silent)
    report = await replaying.replay(ThreadRef("t", store=store), routing="recorded")
    assert [(s.agent, s.status) for s in report.steps] == [("planner", "match"), ("coder", "match")]
    assert report.stop_reasons == ["router_finished"] and silent.requests == []
    assert not isinstance(replaying.router, RecordedRouter)  # the network itself is unchanged


async def test_a_replayed_run_that_fails_is_reported_with_its_error() -> None:
    store = MemoryStore()
    await codegen().run(TASK, thread=ThreadRef("t", store=store))
    planner = Agent("planner", model=ScriptedModel([ModelError("provider down")]))
    failing = Network(
        "codegen", agents=[planner], router=lambda ctx: None if ctx.call_count else planner
    )
    report = await failing.replay(
        ThreadRef("t", store=store), on_divergence="live", routing="recorded"
    )
    assert report.stop_reasons == ["error"]
    assert isinstance(report.error, ModelError)
    assert report.to_dict()["error"] == "ModelError"
    assert report.steps[0].status == "diverged"  # no tools offered today: it went live
    # the text says so too (it said "stop reasons: error" and no more)
    assert report.render().endswith("a replayed run failed: ModelError (report.error)")


async def test_a_router_that_ends_earlier_leaves_the_rest_not_replayed_and_says_why() -> None:
    store = MemoryStore()
    await codegen().run(TASK, thread=ThreadRef("t", store=store))
    network = codegen()
    original = network.router
    network.router = lambda ctx: None if ctx.call_count >= 3 else original(ctx)
    report = await network.replay(ThreadRef("t", store=store))
    assert [s.status for s in report.steps] == ["match"] * 3 + ["not_replayed"] * 2
    [why] = report.steps[3].differences
    assert why.aspect == "routing" and "today's router calls nothing" in why.summary
    assert report.steps[4].differences == [] and report.diverged
