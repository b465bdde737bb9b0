"""`RemoteContext`: an agent whose model is an `A2AModel` continues one remote A2A context
per thread and agent, against the a2a-sdk reference server process
(`tests/agents/models/a2a_remotes.py`): a thread's second turn is the remote's second turn in
the same context, from a new model object too (nothing is kept in memory); another thread, or
another agent, is another context; a run on no thread is a context of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents import A2AModel, Agent, ScriptedModel, tool
from agents.capabilities.remote_a2a import RemoteContext
from network import ConfigurationError, Network, ThreadRef
from tests.agents.models.a2a_remotes import running

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def reference() -> Iterator[str]:
    with running("reference") as url:
        yield url


def until_answered(agent: Any) -> Any:
    return lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None


def solo(url: str, name: str = "remote") -> Network:
    remote = Agent(name, model=A2AModel(url))
    return Network("solo", agents=[remote], router=until_answered(remote))


def context_of(output: str) -> str:
    return output.split("of context ")[1].rstrip(")")


def test_an_agent_with_an_a2a_model_gets_the_capability() -> None:
    agent = Agent("remote", model=A2AModel("http://127.0.0.1:9"))
    assert any(isinstance(c, RemoteContext) for c in agent.capabilities)
    agent.model = None  # a model set later rebuilds the agent's capabilities
    assert not any(isinstance(c, RemoteContext) for c in agent.capabilities)


async def test_a_thread_continues_the_remote_conversation(reference: str, tmp_path: Path) -> None:
    store = str(tmp_path / "threads.db")
    first = await solo(reference).run("one", thread=ThreadRef("t-1", store=store))
    second = await solo(reference).run("two", thread=ThreadRef("t-1", store=store))
    context = context_of(first.output)
    assert second.output == f"echo: two (turn 2 of context {context})"  # only the new turn
    other = await solo(reference).run("three", thread=ThreadRef("t-2", store=store))
    assert "turn 1 of context" in other.output and context_of(other.output) != context
    named = await solo(reference, "another").run("four", thread=ThreadRef("t-1", store=store))
    assert context_of(named.output) != context


async def test_a_run_on_no_thread_is_a_context_of_its_own(reference: str) -> None:
    one = await solo(reference).run("alone")
    two = await solo(reference).run("alone")
    assert "turn 1" in one.output and "turn 1" in two.output
    assert context_of(one.output) != context_of(two.output)


def test_an_agent_whose_model_is_a_remote_agent_refuses_tools_of_its_own() -> None:
    """The remote is sent no tool schemas (it has its own tools): tools given to its agent were
    never offered nor called, silently. Refused when the agent is made, and when an agent with
    tools is given an `A2AModel`, which leaves its model as it was."""

    @tool
    def pay(amount: int) -> int:
        """Pay."""
        return amount

    with pytest.raises(ConfigurationError, match=r"agent 'travel': .*A2AModel.*\('pay'\)"):
        Agent("travel", model=A2AModel("https://trips.example"), tools=[pay])
    local = ScriptedModel(["hi"])
    agent = Agent("travel", model=local, tools=[pay])
    with pytest.raises(ConfigurationError, match="would never be called"):
        agent.model = A2AModel("https://trips.example")
    assert agent.model is local
    assert Agent("remote", model=A2AModel("https://trips.example")).tools == {}
