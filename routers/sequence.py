"""`sequence(*agents)`: run agents one after another, each once, then finish."""

from __future__ import annotations

import itertools
from typing import Any

from network.drawing import MermaidIds, edge_line, node_line
from network.errors import ConfigurationError
from network.run.context import RunContext


def sequence(*agents: Any) -> Any:
    """A router that runs `agents` in order, once each (agents or agent names).

    The position lives in the run context, not in the router, so one router can serve
    concurrent runs. `route.to_mermaid()` draws the chain.
    """
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

    def to_mermaid() -> str:
        return _chain_mermaid([a if isinstance(a, str) else a.name for a in order])

    route.validate = validate  # type: ignore[attr-defined]
    route.to_mermaid = to_mermaid  # type: ignore[attr-defined]
    route.kind = "sequence"  # type: ignore[attr-defined]
    return route


def _chain_mermaid(names: list[str]) -> str:
    """START -> each agent in turn -> END; steps are numbered when an agent runs twice."""
    ids = MermaidIds()
    start, end = ids(("START",), "START"), ids(("END",), "END")
    lines = ["flowchart TD", node_line(start, "START", "terminal")]
    for name in dict.fromkeys(names):
        lines.append(node_line(ids(("agent", name), name), name))
    lines.append(node_line(end, "END", "terminal"))
    # A chain drawn through a repeated node would look like a loop; numbers keep it readable.
    numbered = len(set(names)) < len(names)
    path = [start, *(ids(("agent", name), name) for name in names), end]
    for step, (source, target) in enumerate(itertools.pairwise(path), start=1):
        lines.append(edge_line(source, target, str(step) if numbered else None))
    return "\n".join(lines) + "\n"
