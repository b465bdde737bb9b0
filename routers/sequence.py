"""`sequence(*agents)`: run agents one after another, each once, then finish."""

from __future__ import annotations

from typing import Any

from network.context import RunContext
from network.errors import ConfigurationError


def sequence(*agents: Any) -> Any:
    """A router that runs `agents` in order, once each (agents or agent names)."""
    if not agents:
        raise ConfigurationError("sequence() needs at least one agent")
    order = list(agents)

    def route(ctx: RunContext) -> Any:
        position = ctx.extras.get("sequence.position", 0)
        if position >= len(order):
            return None
        ctx.extras["sequence.position"] = position + 1
        return order[position]

    def validate(network: Any) -> None:
        network.resolve(order)

    route.validate = validate  # type: ignore[attr-defined]
    return route
