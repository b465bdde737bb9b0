"""The run kernel takes a network definition as data: a run, a continuation, a run on a thread,
a served run and a sub-run are carried out from what the definition holds, and nothing below
the facade calls back into `Network` to run (the durable engine's workflows included)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, ThreadRef, durable, kernel
from network.run.budgets.shared import SharedBudget
from network.run.context import AgentLike, Router, RunBookkeeping, RunContext, RunStages
from network.run.limits import UsageLimits
from network.run.options import RunOptions
from network.run.resources import ResourceFactory, Resources
from network.state.schema import StateSchema
from network.state.state import State
from network.threads import MemoryStore
from tests.network.capabilities.replay.teams import TASK, codegen
from tests.network.threads.payments import PAID, pay_network

pytestmark = pytest.mark.anyio


class Definition:
    """Only what `RunnableNetwork` names of a network: no run method to call back into."""

    def __init__(self, network: Network) -> None:
        self._network = network

    @property
    def name(self) -> str:
        return self._network.name

    @property
    def agents(self) -> Mapping[str, AgentLike]:
        return self._network.agents

    @property
    def router(self) -> Router:
        return self._network.router

    @property
    def max_iter(self) -> int:
        return self._network.max_iter

    @property
    def schema(self) -> StateSchema:
        return self._network.schema

    @property
    def predict_state(self) -> Mapping[str, Mapping[str, Any]]:
        return self._network.predict_state

    @property
    def default_model(self) -> Any:
        return self._network.default_model

    @property
    def resources(self) -> Mapping[str, ResourceFactory]:
        return self._network.resources

    @property
    def limits(self) -> UsageLimits | None:
        return self._network.limits

    @property
    def budget(self) -> tuple[SharedBudget, ...]:
        return self._network.budget

    def resolve(self, choice: Any) -> list[AgentLike]:
        return self._network.resolve(choice)

    def new_state(self, data: Mapping[str, Any] | State | None = None) -> State:
        return self._network.new_state(data)

    def run_stages_for(self, ctx: RunContext, *, metered: bool, live: bool = False) -> RunStages:
        return self._network.run_stages_for(ctx, metered=metered, live=live)


@pytest.fixture(autouse=True)
def _no_payments() -> None:
    PAID.clear()


async def test_a_run_and_its_continuation_need_only_the_definition(tmp_path: Path) -> None:
    definition = Definition(pay_network())
    stopped = await kernel.run(definition, "Pay the invoice", RunOptions())
    assert stopped.stop_reason == "interrupted" and PAID == []
    answers = [stopped.interrupts[0].accept()]
    done = await kernel.run(definition, stopped.resume(answers), RunOptions())
    assert done.output == "Done: paid 100" and PAID == [100]
    thread = ThreadRef("t", store=str(tmp_path / "threads.db"))
    on_thread = await kernel.run(definition, "Pay the invoice", RunOptions(thread=thread))
    assert on_thread.persisted and on_thread.thread_id == "t"
    resumed = await kernel.run(
        definition, on_thread.resume([on_thread.interrupts[0].accept()]), RunOptions(thread=thread)
    )
    assert resumed.persisted and PAID == [100, 100]


async def test_limits_and_resources_come_from_the_definition() -> None:
    opened: list[str] = []

    def clock() -> Any:
        opened.append("clock")
        return _Value("noon")

    @tool
    async def time_of_day(ctx: ToolContext) -> str:
        """Tell the time."""
        assert ctx.run is not None
        answer: str = await ctx.run.resource("clock")
        return answer

    def answer(request: Any) -> Any:
        return call("time_of_day") if len(request.history) == 1 else "ok"

    network = Network(
        "timed",
        agents=[Agent("a", tools=[time_of_day], model=ScriptedModel(answer))],
        router=lambda ctx: "a" if ctx.call_count < 2 else None,
        resources={"clock": clock},
        limits=UsageLimits(max_model_calls=1),
    )
    capped = await kernel.run(Definition(network), "go", RunOptions())
    assert capped.stop_reason == "usage_limit"  # the network's limits, read from the definition
    assert opened == ["clock"]  # its resources too
    lifted = await kernel.run(
        Definition(network), "go", RunOptions(limits=UsageLimits(max_model_calls=5))
    )
    assert lifted.stop_reason == "router_finished"  # the run's own limits over the network's


async def test_a_prepared_context_is_executed_with_the_definitions_resources() -> None:
    network = Network("solo", agents=[Agent("a", model=ScriptedModel(["hi"]))])
    state = network.new_state()
    ctx: RunContext[Any] = RunContext(
        network=network,
        state=state,
        input="hello",
        run_id="r1",
        engine=RunBookkeeping(resources=Resources({})),
    )
    seen: list[str] = []
    result = await kernel.execute(
        Definition(network), ctx, sinks=[lambda event: seen.append(event.type)]
    )
    assert result.output == "hi" and seen[0] == "RUN_STARTED" and seen[-1] == "RUN_FINISHED"


async def test_a_sub_run_goes_through_the_kernel() -> None:
    inner = Network("inner", agents=[Agent("helper", model=ScriptedModel(["helped"]))])
    # the sub-run tool given a definition only: a sub-run that called back into the network's
    # run methods would find none
    helper = dataclasses.replace(
        inner.as_tool(description="helps"), network_of=lambda _parent: Definition(inner)
    )
    supervisor = Network(
        "outer",
        agents=[
            Agent(
                "boss",
                tools=[helper],
                model=ScriptedModel([call("inner", input="help"), "thanks"]),
            )
        ],
        router=lambda ctx: "boss" if ctx.call_count < 2 else None,
    )
    result = await supervisor.run("go")
    assert result.output == "thanks"
    assert [record.content for record in result.results[0].tool_calls] == ["helped"]


async def test_a_durable_run_and_its_continuation_do_not_call_back_into_the_facade(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    network = pay_network()
    calls: list[str] = []
    run = Network.run

    async def counted(self: Network, input: Any, **kwargs: Any) -> Any:
        calls.append(type(input).__name__)
        return await run(self, input, **kwargs)

    monkeypatch.setattr(Network, "run", counted)
    executed: list[bool] = []
    run_kernel = kernel.run

    def recorded(*args: Any, steps: Any = None, **kwargs: Any) -> Any:
        executed.append(steps is not None)
        return run_kernel(*args, steps=steps, **kwargs)

    monkeypatch.setattr(kernel, "run", recorded)
    durable.launch([network], db=f"sqlite:///{tmp_path / 'dbos.sqlite'}")
    try:
        stopped = await network.run("Pay", durable=True, run_id=f"k-{uuid.uuid4().hex[:8]}")
        answers = [stopped.interrupts[0].accept()]
        done = await network.run(stopped.resume(answers), durable=True)
    finally:
        durable.shutdown()
    assert done.output == "Done: paid 100" and PAID == [100]
    assert calls == ["str", "Resume"]  # the caller's two calls, and none from the workflows
    assert executed == [True, True]  # each workflow ran the kernel, with its steps recorded


async def test_a_replay_runs_through_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryStore()
    ref = ThreadRef("t", store=store)
    await codegen().run(TASK, thread=ref)
    calls: list[str] = []
    run = Network.run

    async def counted(self: Network, *args: Any, **kwargs: Any) -> Any:
        calls.append(self.name)
        return await run(self, *args, **kwargs)

    monkeypatch.setattr(Network, "run", counted)
    report = await codegen().replay(ref, tools="recorded")
    assert report.stop_reasons == ["router_finished"] and report.steps
    assert calls == []  # the replayed run did not come back through the facade


class _Value:
    """An async context manager holding `value` (a resource's shape)."""

    def __init__(self, value: str) -> None:
        self.value = value

    async def __aenter__(self) -> str:
        return self.value

    async def __aexit__(self, *exc: object) -> None:
        return None
