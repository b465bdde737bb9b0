"""A run on a thread keeps what a replay needs, on every store: each model answer as the model
gave it (text, tool calls, reasoning, usage; every answer of a re-asked call; the answer a
capability changed, as given), every tool result, the tools offered and the router's choices;
and a thread's runs are read back as the turns that made them."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agents import Agent, AgentHooks, ScriptedModel
from network import Network, ThreadRef
from network.capabilities.replay import recorded_turns
from network.capabilities.replay.recording import answer_response, caller_state
from tests.network.capabilities.replay.stores import read_back
from tests.network.capabilities.replay.teams import TASK, codegen

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


async def test_a_thread_keeps_answers_reasoning_tool_results_tools_offered_and_routing(
    store: Any,
) -> None:
    await codegen().run(TASK, thread=ThreadRef("t1", store=store))
    thread = await read_back(store, "t1")
    results = list(thread.results)
    assert [r.agent for r in results] == ["planner", "coder", "coder", "reviewer", "reviewer"]
    asked = results[1].output[0]
    assert asked.reasoning == "The plan asks for two files."
    assert asked.tool_calls[0].name == "save"
    assert asked.tool_calls[0].arguments["files"]["add.py"].startswith("def add")
    assert results[1].usage.completion_tokens > 0
    saved = results[1].tool_calls[0]
    assert (saved.name, saved.content) == ("save", "saved add.py, test_add.py")
    offered = [schema["function"]["name"] for schema in results[1].offered_tools]
    assert offered == ["save"]
    assert results[1].offered_tools[0]["function"]["description"] == "Save files to the project."
    assert results[0].offered_tools == []  # the planner is offered no tool
    assert results[1].answers == ()  # one request, its answer unchanged: `output` says it all


class Verdict(BaseModel):
    approved: bool


async def test_every_answer_of_a_re_asked_call_is_kept_in_order(store: Any) -> None:
    judge = Agent(
        "judge",
        model=ScriptedModel(["not json", '{"approved": true}']),
        output_type=Verdict,
    )
    await Network("typed", agents=[judge]).run("Judge it.", thread=ThreadRef("t", store=store))
    result = (await read_back(store, "t")).results[0]
    assert [answer.content for answer in result.answers] == ["not json", '{"approved": true}']
    assert answer_response(result, 0).message.content == "not json"  # type: ignore[union-attr]
    assert answer_response(result, 1).message.content == '{"approved": true}'  # type: ignore[union-attr]
    assert answer_response(result, 2) is None


async def test_an_answer_a_capability_changed_is_kept_as_the_model_gave_it(store: Any) -> None:
    def shout(call: Any) -> None:
        call.response.message.content = call.response.message.content.upper()

    loud = Agent("loud", model=ScriptedModel(["quiet words"]), hooks=AgentHooks(on_response=shout))
    await Network("loud", agents=[loud]).run("Speak.", thread=ThreadRef("t", store=store))
    result = (await read_back(store, "t")).results[0]
    assert result.output[0].content == "QUIET WORDS"
    assert [answer.content for answer in result.answers] == ["quiet words"]


async def test_a_threads_runs_are_read_back_as_turns_with_their_callers_state(
    store: Any,
) -> None:
    network = codegen()
    ref = ThreadRef("t", store=store)
    await network.run(TASK, thread=ref, state={"files": {"README": "hi"}})
    await network.run("Now add sub(a, b).", thread=ref)
    turns = recorded_turns(list((await read_back(store, "t")).results))
    assert [turn.input for turn in turns] == [TASK, "Now add sub(a, b)."]
    assert [len(turn.calls) for turn in turns] == [5, 5]
    assert turns[0].state == {"files": {"README": "hi"}}
    assert turns[1].state == {}
    assert turns[0].run_id is not None and turns[0].run_id != turns[1].run_id
    assert caller_state(turns[0].calls[1]) == {}  # only a run's first call carries it
