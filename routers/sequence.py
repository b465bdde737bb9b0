"""`sequence(*agents)`: run agents one after another, each once, then finish."""

from __future__ import annotations

import itertools
from typing import Any

from network.drawing import MermaidIds, edge_line, node_line
from network.errors import ConfigurationError
from network.run.context import NetworkLike, RunContext


def sequence(*agents: Any) -> Any:
    """A router that runs `agents` in order, once each (agents or agent names, or a
    `Parallel` fan-out, which counts as one place however many branches it has).

    Nothing is stored, in the router or in the run: the position is read from the run's own
    calls, so one router serves any number of concurrent runs. The next agent is the one
    `ctx.call_count` places after the run's first call in the order:

    - a fresh run (a thread's next run too) starts from the first agent;
    - a run resumed after an interrupt (`network.resume`) starts by finishing the interrupted
      agent's call, so the sequence goes on after that agent (after its first place, when it
      stands in the sequence more than once);
    - a durable run replayed after a crash counts its replayed calls, so it goes on where it was.

    `route.to_mermaid()` draws the chain.
    """
    if not agents:
        raise ConfigurationError("sequence() needs at least one agent")
    order = list(agents)
    names = [a if isinstance(a, str) else a.name for a in order]

    def route(ctx: RunContext) -> Any:
        position = _position(names, ctx)
        return order[position] if position < len(order) else None

    def validate(network: NetworkLike) -> None:
        network.resolve(order)

    def to_mermaid() -> str:
        return _chain_mermaid(names)

    route.validate = validate  # type: ignore[attr-defined]
    route.to_mermaid = to_mermaid  # type: ignore[attr-defined]
    route.kind = "sequence"  # type: ignore[attr-defined]
    return route


def _position(names: list[str], ctx: RunContext) -> int:
    """Where the run is in the sequence: its steps so far, counted from its first step."""
    done = ctx.call_count
    if done == 0:
        return 0
    results = ctx.state.results  # a thread's earlier runs come first: this run's are the last
    steps = _steps(results[max(len(results) - done, 0) :])
    return (names.index(steps[0]) if steps[0] in names else 0) + len(steps)


def _steps(results: Any) -> list[str]:
    """The names of the sequence entries a run's calls ran, one per entry: an agent call is
    one, and so is a whole `Parallel` fan-out (its branches' calls are consecutive results,
    each naming its branch `"<fan-out name>/<key>"`), however many branches it had."""
    steps: list[str] = []
    fan_out: str | None = None  # the fan-out the previous result was a branch of
    seen: set[str] = set()  # its branches so far: one seen again starts another fan-out
    for result in results:
        branch = result.branch
        name = result.agent if branch is None else branch.split("/", 1)[0]
        if branch is None or name != fan_out or branch in seen:
            steps.append(name)
            seen = set()
        fan_out = None if branch is None else name
        if branch is not None:
            seen.add(branch)
    return steps


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
