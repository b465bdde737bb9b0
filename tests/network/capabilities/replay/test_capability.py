"""`Replay`: today's network against a recorded thread, answered from the recording, reporting
per step whether the request sent matches the recorded one, and where it departs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel
from network import Network, ThreadRef
from network.capabilities.replay import REPLAY_DIVERGED
from network.threads import MemoryStore
from tests.network.capabilities.replay.teams import CODER, TASK, Counts, codegen

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


async def recorded(store: Any = None) -> Any:
    """A codegen run recorded on a thread of `store` (a new MemoryStore by default)."""
    store = store if store is not None else MemoryStore()
    await codegen().run(TASK, thread=ThreadRef("t", store=store))
    return store


async def test_an_unchanged_network_matches_every_step_without_asking_a_model() -> None:
    store = await recorded()
    counts = Counts()
    report = await codegen(counts).replay(ThreadRef("t", store=store))
    assert [step.status for step in report.steps] == ["match"] * 5
    assert not report.diverged and report.first_divergence is None
    assert counts.requests == {}  # every answer came from the recording
    assert counts.tools == {"save": 1, "review": 1}  # tools run live by default
    assert report.stop_reasons == ["router_finished"]
    assert report.outputs == ["Approved."]
    coder = report.steps[1]
    assert coder.checked[:4] == ["routing", "instructions", "conversation", "tools"]
    assert coder.answered_from_recording == 1
    replayed = report.results[0]
    assert replayed.state.kv.data["files"]["add.py"].startswith("def add")
    assert replayed.results[1].output[0].reasoning == "The plan asks for two files."


async def test_recorded_tools_run_no_side_effect_and_make_their_recorded_writes() -> None:
    store = await recorded()
    counts = Counts()
    report = await codegen(counts).replay(ThreadRef("t", store=store), tools="recorded")
    assert [step.status for step in report.steps] == ["match"] * 5
    assert counts.tools == {} and counts.requests == {}
    assert report.steps[1].tools_from_recording == 1
    replayed = report.results[0]
    assert replayed.state.kv.data["files"] == {
        "add.py": "def add(a, b):\n    return a + b\n",
        "test_add.py": "assert True\n",
    }
    assert replayed.results[1].tool_calls[0].content == "saved add.py, test_add.py"
    # the writes are the tool's, in its name, as the recording had them
    writers = [w.writer.tool for w in replayed.state.history_of("files")]
    assert writers == ["save"]


async def test_a_changed_prompt_stops_the_replay_with_a_diff_of_the_instructions() -> None:
    store = await recorded()
    counts = Counts()
    changed = codegen(counts, coder_prompt=CODER.replace("Python code", "careful Python code"))
    report = await changed.replay(ThreadRef("t", store=store))
    assert [step.status for step in report.steps] == [
        "match",
        "diverged",
        "not_replayed",
        "not_replayed",
        "not_replayed",
    ]
    first = report.first_divergence
    assert first is not None and (first.turn, first.index, first.agent) == (0, 1, "coder")
    [difference] = first.differences
    assert difference.aspect == "instructions"
    assert "-You write Python code. Follow the plan:" in difference.diff
    assert "+You write careful Python code. Follow the plan:" in difference.diff
    assert report.stop_reasons == [REPLAY_DIVERGED]
    assert counts.requests == {} and counts.tools == {}  # stopped before anything ran
    text = report.render()
    assert "first divergence: turn 0 step 1 (coder)" in text
    assert "+You write careful Python code" in text


async def test_a_changed_tool_description_is_a_divergence_of_the_tools_offered() -> None:
    store = await recorded()
    report = await codegen(save_doc="Save files, overwriting any.").replay(
        ThreadRef("t", store=store)
    )
    [difference] = report.steps[1].differences
    assert difference.aspect == "tools"
    assert '-      "description": "Save files to the project.",' in difference.diff
    assert '+      "description": "Save files, overwriting any.",' in difference.diff


async def test_a_changed_tool_result_is_reported_at_the_tool_then_in_the_conversation() -> None:
    store = await recorded()
    report = await codegen(saved="wrote").replay(
        ThreadRef("t", store=store), on_divergence="continue"
    )
    coder = report.steps[1]
    assert [d.aspect for d in coder.differences] == ["tool_results"]
    assert "-saved add.py, test_add.py" in coder.differences[0].diff
    assert "+wrote add.py, test_add.py" in coder.differences[0].diff
    assert [d.aspect for d in report.steps[2].differences] == ["conversation"]
    assert "+[tool save] wrote add.py, test_add.py" in report.steps[2].differences[0].diff


async def test_a_changed_router_is_a_routing_divergence_and_recorded_routing_replays_it() -> None:
    store = await recorded()
    report = await codegen(reviewer_first=True).replay(ThreadRef("t", store=store))
    step = report.steps[1]
    assert (step.status, step.agent, step.recorded_agent) == ("diverged", "reviewer", "coder")
    assert step.differences[0].aspect == "routing"
    assert (
        "-call coder" in step.differences[0].diff and "+call reviewer" in step.differences[0].diff
    )
    assert report.stop_reasons == [REPLAY_DIVERGED]
    followed = await codegen(reviewer_first=True).replay(
        ThreadRef("t", store=store), routing="recorded"
    )
    assert [s.status for s in followed.steps] == ["match"] * 5


async def test_going_live_at_the_divergence_asks_the_real_model_from_there() -> None:
    store = await recorded()
    counts = Counts()
    changed = codegen(counts, coder_prompt="Write code.")
    report = await changed.replay(ThreadRef("t", store=store), on_divergence="live")
    assert [step.status for step in report.steps] == ["match", "diverged", "live", "live", "live"]
    assert counts.requests == {"coder": 2, "reviewer": 2}  # from the divergence on, live
    assert report.stop_reasons == ["router_finished"]


async def test_continuing_reports_every_divergence_answered_from_the_recording() -> None:
    store = await recorded()
    counts = Counts()
    report = await codegen(counts, coder_prompt="Write code.").replay(
        ThreadRef("t", store=store), on_divergence="continue"
    )
    assert [step.status for step in report.steps] == ["match", "diverged", "diverged"] + [
        "match"
    ] * 2
    assert counts.requests == {}


class Verdict(BaseModel):
    approved: bool


def judge_network(answers: list[str], retries: int = 2) -> Network:
    judge = Agent(
        "judge", model=ScriptedModel(answers), output_type=Verdict, output_retries=retries
    )
    return Network("typed", agents=[judge])


async def test_a_re_asked_call_gets_each_recorded_answer_in_turn() -> None:
    store = MemoryStore()
    await judge_network(["nope", '{"approved": true}']).run(
        "Judge.", thread=ThreadRef("t", store=store)
    )
    report = await judge_network([]).replay(ThreadRef("t", store=store))
    [step] = report.steps
    assert (step.status, step.requests, step.answered_from_recording) == ("match", 2, 2)
    assert report.results[0].results[0].output_value == Verdict(approved=True)


async def test_a_call_asking_more_often_than_recorded_diverges_on_its_requests() -> None:
    store = MemoryStore()
    await judge_network(['{"approved": true}']).run("Judge.", thread=ThreadRef("t", store=store))

    class Strict(BaseModel):
        approved: bool
        reason: str

    judge = Agent("judge", model=ScriptedModel([]), output_type=Strict, output_retries=2)
    report = await Network("typed", agents=[judge]).replay(ThreadRef("t", store=store))
    [step] = report.steps
    assert step.status == "diverged"
    kinds = [d.aspect for d in step.differences]
    assert "requests" in kinds  # today's validation re-asks; the recording answered once
    assert report.stop_reasons == [REPLAY_DIVERGED]
