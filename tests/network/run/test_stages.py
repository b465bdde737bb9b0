"""`network.run.stages`: an agent's capabilities resolved once into each stage's callables."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel
from network import AgentCall, Capability, Network
from network.run.stages import NO_STAGES, chain, resolve_stages, run_stages

pytestmark = pytest.mark.anyio


class Instructs(Capability):
    async def instructions(self, call: AgentCall, text: str) -> str:
        return text


class Starts(Capability):
    async def run_started(self, run: Any) -> None:
        return None


def test_a_stage_nobody_implements_is_an_empty_tuple() -> None:
    stages = resolve_stages((Instructs(),), ())
    assert len(stages.instructions) == 1
    assert stages.request == stages.wrap_model == stages.record == ()
    assert resolve_stages((), ()).capabilities == ()
    assert NO_STAGES.key is None


def test_the_run_stages_are_those_of_the_runs_capabilities() -> None:
    starts = Starts()
    stages = run_stages((starts, Instructs()))
    assert stages.run_started == (starts.run_started,) and stages.next_call == ()
    assert run_stages(()).capabilities == ()


async def test_an_agent_resolves_once_per_network_and_again_on_another() -> None:
    agent = Agent("a", model=ScriptedModel(lambda request: "x"), capabilities=[Instructs()])
    first = Network("one", agents=[agent], capabilities=[Starts()])
    second = Network("two", agents=[agent], capabilities=[Starts()])
    await first.run("go")
    resolved = agent.stages(first._run_stages.capabilities)
    await first.run("again")
    assert agent.stages(first._run_stages.capabilities) is resolved  # cached
    await second.run("go")
    assert agent.stages(second._run_stages.capabilities) is not resolved
    assert agent.stages(first._run_stages.capabilities) is resolved  # both kept


async def test_chain_wraps_the_first_outermost() -> None:
    seen: list[str] = []

    async def outer(label: str, value: int, proceed: Any) -> int:
        seen.append(f"outer {label}")
        return int(await proceed(value + 1)) * 10

    async def inner(label: str, value: int, proceed: Any) -> int:
        seen.append(f"inner {label}")
        return int(await proceed(value + 1))

    async def core(value: int) -> int:
        seen.append("core")
        return value

    wrapped = chain((outer, inner), core, "x")
    assert await wrapped(1) == 30
    assert seen == ["outer x", "inner x", "core"]
