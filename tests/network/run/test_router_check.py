"""A router that cannot be called as `router(ctx)` is refused when the network is built or its
router is set (docs/routers.md), not at the run's first routing decision."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel
from network import Network
from network.errors import ConfigurationError


def agents() -> list[Agent]:
    return [Agent("a", model=ScriptedModel(["hi"])), Agent("b", model=ScriptedModel(["hi"]))]


def no_parameter() -> None:
    return None


def two_needed(ctx: Any, extra: Any) -> None:
    return None


@pytest.mark.parametrize("router", [no_parameter, two_needed, lambda: None])
def test_a_router_not_callable_as_router_ctx_is_refused_when_built(router: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"router .*cannot be called as router\(ctx\)"):
        Network("n", agents=agents(), router=router)


def test_the_refusal_names_the_router() -> None:
    with pytest.raises(ConfigurationError, match="no_parameter"):
        Network("n", agents=agents(), router=no_parameter)


def test_a_router_set_later_is_checked_too() -> None:
    network = Network("n", agents=agents(), router=lambda ctx: None)
    kept = network.router
    with pytest.raises(ConfigurationError, match="no_parameter"):
        network.router = no_parameter
    with pytest.raises(ConfigurationError, match="is not callable"):
        network.router = "a"  # type: ignore[assignment]
    assert network.router is kept  # left as it was


class Callable:
    def __call__(self, ctx: Any, *, hint: str = "") -> None:
        return None


@pytest.mark.parametrize(
    "router", [lambda ctx: None, lambda *args: None, Callable(), lambda ctx, more=1: None]
)
def test_routers_callable_as_router_ctx_are_taken(router: Any) -> None:
    assert Network("n", agents=agents(), router=router).router is router
