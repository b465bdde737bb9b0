"""`GraphRouter`: agents as nodes of a networkx graph, edges with optional conditions.

    router = (
        GraphRouter(start=planner)
        .edge(planner, coder)
        .edge(coder, reviewer)
        .edge(reviewer, coder, when=needs_work)
        .edge(reviewer, END)
    )

The first call runs `start`. After that, the router follows the edges out of the agent that
ran last, in the order they were added, and takes the first whose condition (`ctx -> bool`,
sync or async; no condition means always) holds. An edge to `END`, or no edge holding, ends
the run. At most one edge joins two nodes: two conditions for the same hop belong in one
function.

The graph is checked when the Network is built: every node must be one of the network's
agents and reachable from `start`. Agents of the network that are not in the graph are
allowed (another router may wrap this one), but this router never chooses them.

networkx is imported when a router is built, never by `import routers`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from network.drawing import MermaidIds, edge_line, node_line
from network.errors import ConfigurationError
from network.run.context import RunContext

Condition = Callable[[RunContext], Any]


class _End:
    """The graph's exit node; `END` is its only instance."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "END"

    def __reduce__(self) -> str:
        return "END"


END: Any = _End()
"""The target of an edge that finishes the run."""


class GraphRouter:
    """A router that follows the edges of a directed graph of agents (see module docstring).

    Args:
        start: the agent (or agent name) that runs first.
    """

    kind = "graph"

    def __init__(self, start: Any) -> None:
        import networkx as nx  # noqa: PLC0415 (networkx)

        self._graph = nx.DiGraph()
        self.start: str = self._add_node(start, "start")

    # -- building --------------------------------------------------------------------------

    def edge(
        self,
        source: Any,
        target: Any,
        *,
        when: Condition | None = None,
        label: str | None = None,
    ) -> GraphRouter:
        """Add the hop `source -> target` (an agent, a name or `END`); returns the router.

        `when(ctx)` decides whether the hop is taken (sync or async, truthy = take it);
        `label` names it in the Mermaid drawing (default: the condition's `__name__`).
        """
        if source is END:
            raise ConfigurationError("graph router: END has no outgoing edges")
        if when is not None and not callable(when):
            raise ConfigurationError(f"graph router: when={when!r} is not callable")
        head = self._add_node(source, "source")
        tail = END if target is END else self._add_node(target, "target")
        if self._graph.has_edge(head, tail):
            raise ConfigurationError(
                f"graph router: there is already an edge {head!r} -> {tail!r}; "
                "combine the two conditions into one"
            )
        self._graph.add_edge(head, tail, when=when, label=label or _condition_name(when))
        return self

    def _add_node(self, agent: Any, role: str) -> str:
        name = agent if isinstance(agent, str) else getattr(agent, "name", None)
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"graph router: {role} {agent!r} is not an agent or a name")
        given = None if isinstance(agent, str) else agent  # kept to check identity later
        node = self._graph.nodes.get(name)
        if node is None:
            self._graph.add_node(name, agent=given)
        elif given is not None:
            if node["agent"] is not None and node["agent"] is not given:
                raise ConfigurationError(f"graph router: two different agents are named {name!r}")
            node["agent"] = given
        return name

    @property
    def graph(self) -> Any:
        """The graph as a read-only networkx `DiGraph` view (nodes are names, plus END)."""
        return self._graph.copy(as_view=True)

    # -- checking --------------------------------------------------------------------------

    def validate(self, network: Any) -> None:
        """Called by `Network(...)`: every node an agent of it, every node reachable."""
        import networkx as nx  # noqa: PLC0415 (networkx)

        names = [node for node in self._graph.nodes if node is not END]
        unknown = [name for name in names if name not in network.agents]
        if unknown:
            raise ConfigurationError(
                f"graph router: {_names(unknown)} {'is' if len(unknown) == 1 else 'are'} not in "
                f"network {network.name!r} "
                f"(agents: {', '.join(network.agents)})"
            )
        for name in names:
            given = self._graph.nodes[name]["agent"]
            if given is not None and network.agents[name] is not given:
                raise ConfigurationError(
                    f"graph router: agent {name!r} is not the agent of that name in network "
                    f"{network.name!r}"
                )
        reachable = nx.descendants(self._graph, self.start) | {self.start}
        unreachable = [name for name in names if name not in reachable]
        if unreachable:
            raise ConfigurationError(
                f"graph router: {_names(unreachable)} cannot be reached from start {self.start!r}"
            )

    # -- routing ---------------------------------------------------------------------------

    async def __call__(self, ctx: RunContext) -> str | None:
        """`start` first; then the first edge out of the last agent whose condition holds."""
        if ctx.call_count == 0:
            return self.start
        last = ctx.last_result.agent if ctx.last_result is not None else None
        if last is None or last not in self._graph:
            return None
        for target, data in self._graph.adj[last].items():  # insertion order
            when = data["when"]
            if when is not None:
                holds = when(ctx)
                if inspect.isawaitable(holds):
                    holds = await holds
                if not holds:
                    continue
            return None if target is END else target
        return None

    # -- drawing ---------------------------------------------------------------------------

    def to_mermaid(self) -> str:
        """The graph as a Mermaid `flowchart TD`: START, the agents, labelled edges, END."""
        ids = MermaidIds()
        start_id, end_id = ids(("START",), "START"), ids(("END",), "END")
        lines = ["flowchart TD", node_line(start_id, "START", "terminal")]
        for node in self._graph.nodes:
            if node is not END:
                lines.append(node_line(ids(("agent", node), node), node))
        if END in self._graph:
            lines.append(node_line(end_id, "END", "terminal"))
        lines.append(edge_line(start_id, ids(("agent", self.start), self.start)))
        for source, target, data in self._graph.edges(data=True):
            target_id = end_id if target is END else ids(("agent", target), target)
            lines.append(edge_line(ids(("agent", source), source), target_id, data["label"]))
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"GraphRouter(start={self.start!r}, edges={self._graph.number_of_edges()})"


def _condition_name(when: Condition | None) -> str | None:
    """How an unlabelled condition is drawn: its name, or "when" for a lambda."""
    if when is None:
        return None
    name = getattr(when, "__name__", None) or type(when).__name__
    return "when" if name == "<lambda>" else name


def _names(names: list[str]) -> str:
    listed = ", ".join(repr(name) for name in names)
    return f"agent {listed}" if len(names) == 1 else f"agents {listed}"
