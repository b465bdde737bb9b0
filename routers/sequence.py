"""`sequence(*agents)`: run agents one after another, each once, then finish."""

from __future__ import annotations

import itertools
from typing import Any

from network.drawing import MermaidIds, edge_line, node_line, quote
from network.errors import ConfigurationError
from network.run.context import NetworkLike, RunContext
from network.run.parallel import Parallel


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

    `route.to_mermaid()` draws the chain, a fan-out as its branches side by side.
    """
    if not agents:
        raise ConfigurationError("sequence() needs at least one agent")
    order = list(agents)
    for index, entry in enumerate(order):  # `5` was an AttributeError naming nothing
        name = entry if isinstance(entry, str) else getattr(entry, "name", None)
        if not isinstance(name, str) or not name:
            raise ConfigurationError(
                f"sequence(): entry {index} ({entry!r}) is not an agent, an agent name or a "
                "Parallel fan-out"
            )
    names = [a if isinstance(a, str) else a.name for a in order]

    def route(ctx: RunContext) -> Any:
        position = _position(names, ctx)
        return order[position] if position < len(order) else None

    def validate(network: NetworkLike) -> None:
        network.resolve(order)

    def to_mermaid() -> str:
        return _chain_mermaid(order, names)

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
    branch by branch, each naming its branch `"<fan-out name>/<key>"`; a branch's tool loop
    is several), however many branches it had."""
    steps: list[str] = []
    fan_out: str | None = None  # the fan-out the previous result was a branch of
    previous: str | None = None  # the previous result's branch: its calls go on
    seen: set[str] = set()  # its branches so far: one seen again starts another fan-out
    for result in results:
        branch = result.branch
        name = result.agent if branch is None else branch.split("/", 1)[0]
        if branch is None or name != fan_out or (branch in seen and branch != previous):
            steps.append(name)
            seen = set()
        fan_out = None if branch is None else name
        previous = branch
        if branch is not None:
            seen.add(branch)
    return steps


def _chain_mermaid(order: list[Any], names: list[str]) -> str:
    """START -> each agent in turn -> END; steps are numbered when an agent runs twice. A
    `Parallel` step is drawn as its branches side by side (a subgraph named after the
    fan-out), each reached from the step before it and leading to the step after it."""
    ids = MermaidIds()
    start, end = ids(("START",), "START"), ids(("END",), "END")
    lines = ["flowchart TD", node_line(start, "START", "terminal")]
    levels: list[list[str]] = [[start]]
    for entry, name in zip(order, names, strict=True):
        if isinstance(entry, Parallel):
            lines.append(f"    subgraph {ids(('fan-out', name), name)}[{quote(name)}]")
            level = []
            for branch in entry.branches:
                key = branch.id.split("/", 1)[1]
                node = ids(("branch", branch.id), f"{name}_{key}")
                label = f"network: {key}" if _is_network(branch.agent) else key
                lines.append("    " + node_line(node, label))
                level.append(node)
            lines.append("    end")
            levels.append(level)
        else:
            node = ids(("agent", name), name)
            if node not in {n for level in levels for n in level}:
                lines.append(node_line(node, name))
            levels.append([node])
    lines.append(node_line(end, "END", "terminal"))
    levels.append([end])
    # A chain drawn through a repeated node would look like a loop; numbers keep it readable.
    numbered = len(set(names)) < len(names)
    for step, (sources, targets) in enumerate(itertools.pairwise(levels), start=1):
        for source in sources:
            for target in targets:
                lines.append(edge_line(source, target, str(step) if numbered else None))
    return "\n".join(lines) + "\n"


def _is_network(target: object) -> bool:
    """A branch that runs a network (it has a router, not a `call`)."""
    return not isinstance(target, str) and not callable(getattr(target, "call", None))
