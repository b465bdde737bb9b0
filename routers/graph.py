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

`fan_out(source, [a, b, c], join=summarizer)` runs the targets side by side after `source`
(one `Parallel`, see `network.run.parallel`), then goes on at `join` (or ends, for `END`).
When the network is built, a `ParallelWriteWarning` names any key two agents of one fan-out
declare in `output_key` / `outputs_to_state` that would conflict at the join.

Handoffs are edges: after an agent of the graph hands off (`Agent(handoffs=...)`, see
`agents.capabilities.handoffs`), the router takes the edge to the handoff's target, whatever its
condition
says (the handoff is the condition); without a handoff, edges are tried as above. Each handoff
an agent of the graph may make needs its edge: a missing one is a `ConfigurationError` when
the Network is built, naming both agents. The drawing labels those edges "handoff".

The graph is checked when the Network is built: every node must be one of the network's
agents and reachable from `start`. Agents of the network that are not in the graph are
allowed (another router may wrap this one), but this router never chooses them.

networkx is imported when a router is built, never by `import routers`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from network.drawing import MermaidIds, edge_line, node_line
from network.errors import ConfigurationError, ParallelWriteWarning
from network.run.context import AgentLike, NetworkLike, RunContext
from network.run.parallel import DEFAULT_MAX_STEPS, Parallel
from network.sentinels import Sentinel
from network.state.handlers import replace_values
from network.warned import warn

Condition = Callable[[RunContext], Any]


class _End(Sentinel):
    """The graph's exit node; `END` is its only instance."""

    __slots__ = ()
    name = "END"


END: Any = _End()
"""The target of an edge that finishes the run."""


@dataclass(frozen=True, slots=True)
class _FanOut:
    name: str
    source: str
    targets: tuple[str, ...]
    join: Any  # a node name, or END
    max_concurrency: int | None
    on_error: str
    max_steps: int = DEFAULT_MAX_STEPS


class GraphRouter:
    """A router that follows the edges of a directed graph of agents (see module docstring).

    Args:
        start: the agent (or agent name) that runs first.
    """

    kind = "graph"

    def __init__(self, start: Any) -> None:
        import networkx as nx  # noqa: PLC0415 (networkx)

        self._graph = nx.DiGraph()
        self._fan_outs: dict[str, _FanOut] = {}
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
        head = self._node_name(source, "source")
        tail = END if target is END else self._node_name(target, "target")
        if self._graph.has_edge(head, tail):
            raise ConfigurationError(
                f"graph router: there is already an edge {head!r} -> {tail!r}; "
                "combine the two conditions into one"
            )
        self._add_node(source, "source")
        if target is not END:
            self._add_node(target, "target")
        self._graph.add_edge(head, tail, when=when, label=label or _condition_name(when))
        return self

    def fan_out(
        self,
        source: Any,
        targets: Sequence[Any],
        *,
        join: Any,
        when: Condition | None = None,
        label: str | None = None,
        max_concurrency: int | None = None,
        on_error: str = "fail",
        name: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> GraphRouter:
        """After `source`, run `targets` side by side, then go on at `join` (a node or END).

        `when` decides whether the fan-out is taken, as for `edge`; edges out of `source`
        are tried in the order they were added. `max_concurrency`, `on_error`, `max_steps`
        and `name` (default `"<source>.fan_out"`) are `Parallel`'s. The targets' own edges are not
        followed after the fan-out: the run goes on at `join`.
        """
        if source is END:
            raise ConfigurationError("graph router: END has no outgoing edges")
        if when is not None and not callable(when):
            raise ConfigurationError(f"graph router: when={when!r} is not callable")
        if isinstance(targets, str) or not isinstance(targets, Sequence) or len(targets) < 2:
            raise ConfigurationError(
                f"graph router: fan_out needs a list of at least two targets, got {targets!r}"
            )
        head = self._node_name(source, "source")
        tails = tuple(self._node_name(target, "target") for target in targets)
        if len(set(tails)) != len(tails):
            raise ConfigurationError(f"graph router: fan_out from {head!r} names an agent twice")
        fork = name if name is not None else f"{head}.fan_out"
        if fork in self._fan_outs:
            raise ConfigurationError(f"graph router: two fan-outs are named {fork!r}")
        tail = END if join is END else self._node_name(join, "join")
        Parallel(  # checks the options
            *tails,
            max_concurrency=max_concurrency,
            on_error=on_error,
            name=fork,
            max_steps=max_steps,
        )
        for target in tails:
            if self._graph.has_edge(head, target):
                raise ConfigurationError(
                    f"graph router: there is already an edge {head!r} -> {target!r}"
                )
        for node, role in ((source, "source"), *((t, "target") for t in targets), (join, "join")):
            if node is not END:
                self._add_node(node, role)
        for target in tails:
            self._graph.add_edge(
                head, target, when=when, label=label or _condition_name(when), fan_out=fork
            )
            if not self._graph.has_edge(target, tail):
                self._graph.add_edge(target, tail, when=None, label=None, join=fork)
        self._fan_outs[fork] = _FanOut(
            fork, head, tails, tail, max_concurrency, on_error, max_steps
        )
        return self

    def _add_node(self, agent: AgentLike | str, role: str) -> str:
        name = self._node_name(agent, role)
        given = None if isinstance(agent, str) else agent  # kept to check identity later
        node = self._graph.nodes.get(name)
        if node is None:
            self._graph.add_node(name, agent=given)
        elif given is not None:
            node["agent"] = given
        return name

    def _node_name(self, agent: AgentLike | str, role: str) -> str:
        """The node `agent` names, checked without changing the graph: a builder call that
        fails leaves the graph as it was (else its nodes stayed, unreachable, and building the
        Network failed on them)."""
        name = agent if isinstance(agent, str) else getattr(agent, "name", None)
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"graph router: {role} {agent!r} is not an agent or a name")
        known = None if isinstance(agent, str) else self._graph.nodes.get(name, {}).get("agent")
        if known is not None and known is not agent:
            raise ConfigurationError(f"graph router: two different agents are named {name!r}")
        return name

    @property
    def graph(self) -> Any:
        """The graph as a read-only networkx `DiGraph` view (nodes are names, plus END)."""
        return self._graph.copy(as_view=True)

    # -- checking --------------------------------------------------------------------------

    def validate(self, network: NetworkLike) -> None:
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
        for source, target in getattr(network, "handoff_edges", ()):
            if source in self._graph and not self._graph.has_edge(source, target):
                raise ConfigurationError(
                    f"graph router: agent {source!r} may hand off to agent {target!r}, but "
                    f"the graph has no edge {source!r} -> {target!r} to follow it by; add "
                    f".edge({source!r}, {target!r}) or take the handoff out"
                )
        for fan_out in self._fan_outs.values():
            _warn_about_overlaps(fan_out, network)

    # -- routing ---------------------------------------------------------------------------

    async def __call__(self, ctx: RunContext) -> str | Parallel | None:
        """`start` first; then the first edge out of the last agent whose condition holds."""
        if ctx.call_count == 0:
            return self.start
        result = ctx.last_result
        if result is None:
            return None
        if result.branch is not None and self._fan_outs:  # a fan-out just joined
            fan_out = self._fan_outs.get(result.branch.split("/", 1)[0])
            if fan_out is not None:
                return None if fan_out.join is END else fan_out.join
        last = result.agent
        if last not in self._graph:
            return None
        handoff = result.handoff
        if handoff is not None and self._graph.has_edge(last, handoff.target):
            return handoff.target  # a handoff takes its edge (checked by `validate`)
        tried: set[str] = set()
        for target, data in self._graph.adj[last].items():  # insertion order
            if "join" in data:
                continue  # followed only after the fan-out, above
            fork = data.get("fan_out")
            if fork is not None:
                if fork in tried:
                    continue
                tried.add(fork)
            when = data["when"]
            if when is not None:
                holds = when(ctx)
                if inspect.isawaitable(holds):
                    holds = await holds
                if not holds:
                    continue
            if fork is not None:
                spec = self._fan_outs[fork]
                return Parallel(
                    *spec.targets,
                    max_concurrency=spec.max_concurrency,
                    on_error=spec.on_error,
                    name=fork,
                    max_steps=spec.max_steps,
                )
            return None if target is END else target
        return None

    # -- drawing ---------------------------------------------------------------------------

    def to_mermaid(self, handoffs: Collection[tuple[str, str]] = ()) -> str:
        """The graph as a Mermaid `flowchart TD`: START, the agents, labelled edges, END.

        `handoffs`: the `(source, target)` pairs of the network's handoffs
        (`Network.handoff_edges`, which `network_mermaid` passes); their edges are labelled
        "handoff"."""
        handed = set(handoffs)
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
            label = data["label"]
            if (source, target) in handed:
                label = f"handoff: {label}" if label else "handoff"
            lines.append(edge_line(ids(("agent", source), source), target_id, label))
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"GraphRouter(start={self.start!r}, edges={self._graph.number_of_edges()})"


def _warn_about_overlaps(fan_out: _FanOut, network: NetworkLike) -> None:
    """Warn when two agents of `fan_out` declare writes to one key that would conflict."""
    declared: dict[str, list[str]] = {}
    for name in fan_out.targets:
        agent = network.agents[name]
        for key, handler in _declared_writes(agent):
            spec = network.schema.spec(key)
            merges = (handler or (spec.handler if spec is not None else None)) not in (
                None,
                replace_values,
            )
            if merges or (spec is not None and spec.conflict is not None):
                continue
            owners = declared.setdefault(key, [])
            if name not in owners:
                owners.append(name)
    for key, owners in declared.items():
        if len(owners) > 1:
            warn(
                ParallelWriteWarning(
                    f"graph router: fan-out {fan_out.name!r} runs {_names(owners)} in "
                    f"parallel and each declares a write to state key {key!r} (output_key / "
                    "outputs_to_state), whose handler replaces: a run where both write it "
                    "fails with StateConflictError. Give the key a merging handler or a "
                    '"conflict" rule, or use different keys'
                )
            )


def _declared_writes(agent: AgentLike) -> list[tuple[str, Any]]:
    """`(key, handler or None)` of an agent's `output_key` and its tools' `outputs_to_state`."""
    writes: list[tuple[str, Any]] = []
    output_key = getattr(agent, "output_key", None)
    if isinstance(output_key, str):
        writes.append((output_key, None))
    for tool in getattr(agent, "tools", {}).values():
        for key, mapping in getattr(tool, "outputs_to_state", {}).items():
            writes.append((key, mapping.get("handler")))
    return writes


def _condition_name(when: Condition | None) -> str | None:
    """How an unlabelled condition is drawn: its name, or "when" for a lambda."""
    if when is None:
        return None
    name = getattr(when, "__name__", None) or type(when).__name__
    return "when" if name == "<lambda>" else name


def _names(names: list[str]) -> str:
    listed = ", ".join(repr(name) for name in names)
    return f"agent {listed}" if len(names) == 1 else f"agents {listed}"
