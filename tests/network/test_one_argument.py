"""`refused_as_one_argument`: the one check of a function the library calls with one
argument (a router with the run context, instructions with it, a hook with the agent call)."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import pytest

from agents import Agent, ScriptedModel
from agents.capabilities.hooks.options import AgentHooks
from network import Network
from network.errors import ConfigurationError
from network.one_argument import refused_as_one_argument


def one(ctx: Any) -> None: ...


def two(ctx, more):  # type: ignore[no-untyped-def]
    return None


class Called:
    def __call__(self, ctx: Any) -> None: ...


@pytest.mark.parametrize(
    "fn",
    [
        one,
        lambda ctx: None,
        lambda ctx, more=1: None,
        lambda *args: None,
        Called(),
        print,
        functools.partial(two, more=2),
    ],
)
def test_what_takes_one_argument_passes(fn: Any) -> None:
    assert refused_as_one_argument(fn) is None


@pytest.mark.parametrize("fn", [lambda: None, two, functools.partial(one, 1)])
def test_what_cannot_take_one_argument_is_named_with_its_signature(fn: Any) -> None:
    shown = refused_as_one_argument(fn)
    assert shown is not None and shown.endswith(str(inspect.signature(fn)))


def test_each_place_that_calls_one_names_its_owner() -> None:
    agent = Agent("writer", model=ScriptedModel(["ok"]))
    with pytest.raises(ConfigurationError, match=r"network 'n': router two\(ctx, more\)"):
        Network("n", agents=[agent], router=two)
    with pytest.raises(ConfigurationError, match=r"agent 'a': the system function two"):
        Agent("a", model=ScriptedModel(["ok"]), system=two)
    with pytest.raises(ConfigurationError, match=r"'on_start'\] two\(ctx, more\) cannot be"):
        AgentHooks.coerce({"on_start": two}, "agent 'a'")
