"""The protocols the network talks through: an `Agent` is an `AgentLike`, a `Network` has all a
`NetworkLike` names, and `network.run.protocols` is their one short address."""

from __future__ import annotations

from agents import Agent, ScriptedModel
from network import Network
from network.run import context, protocols, steps
from network.run.definition import RunnableNetwork
from network.run.protocols import AgentLike, NetworkLike


def members(protocol: type) -> set[str]:
    """What a protocol asks for: its annotated attributes, properties and methods."""
    names = set(getattr(protocol, "__annotations__", {}))
    names |= {name for name in vars(protocol) if not name.startswith("_")}
    return names


def test_an_agent_is_agent_like() -> None:
    agent = Agent("writer", model=ScriptedModel(["hi"]))
    assert isinstance(agent, AgentLike)  # the protocol is checked at run time too
    assert not isinstance(object(), AgentLike)


def test_a_network_has_everything_network_like_names() -> None:
    writer = Agent("writer", model=ScriptedModel(["hi"]))
    network = Network("team", agents=[writer], router=lambda ctx: None)
    wanted = members(NetworkLike)
    assert {"name", "agents", "router", "schema", "resolve"} <= wanted
    assert sorted(name for name in wanted if not hasattr(network, name)) == []
    # and all that the code running a network below the facade (the kernel, continuations,
    # durable, the protocol servers) reads of it: a definition; it never calls back into a run
    driven = members(RunnableNetwork)
    assert {"new_state", "resources", "limits", "budget", "run_stages_for"} <= driven
    assert not driven & {"run", "run_with", "start", "execute"}
    assert sorted(name for name in driven if not hasattr(network, name)) == []


def test_the_short_addresses_are_the_context_s_own_objects() -> None:
    for name in protocols.__all__:
        assert getattr(protocols, name) is getattr(context, name)
    assert steps.StepRunner is context.StepRunner
