"""Drawing a network as a Mermaid flowchart.

`network_mermaid(network)` is what `agent-network graph FILE:NETWORK` prints (and what
`routers.network_mermaid` re-exports). A router that
knows its topology (the graph router, `sequence`) draws itself through `to_mermaid()`; any
other router is drawn as one router node that may hand over to every agent, since a plain
function's choices cannot be read without running it; handoffs (`Agent(handoffs=...)`) are
drawn as edges labelled "handoff" from the agent that may make one to its target.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Hashable
from typing import Any

from network.run.context import NetworkLike

# Keywords of Mermaid's flowchart grammar (matched case-sensitively, as Mermaid does: "END"
# is a fine id, "end" closes a subgraph). An id spelled like one gets a suffix.
_RESERVED = frozenset(
    {"end", "graph", "flowchart", "subgraph", "style", "class", "classDef", "click"}
    | {"linkStyle", "direction", "default", "call", "href"}
)
_NOT_ID = re.compile(r"[^A-Za-z0-9_]")


class MermaidIds:
    """Gives every node a distinct, valid Mermaid id, readable where the name allows it.

    Names are drawn in node labels, so the id only has to be stable and unique; it is the
    name itself when that is a plain identifier, else a sanitized form of it.
    """

    __slots__ = ("_ids", "_used")

    def __init__(self) -> None:
        self._ids: dict[Hashable, str] = {}
        self._used: set[str] = set()

    def __call__(self, key: Hashable, name: str) -> str:
        """The id of the node `key` (first call allocates it from `name`)."""
        found = self._ids.get(key)
        if found is not None:
            return found
        base = _NOT_ID.sub("_", name) or "node"
        if not base[0].isalpha():
            base = "n_" + base
        if base in _RESERVED:
            base += "_"
        candidate, suffix = base, 2
        while candidate.lower() in self._used:  # Mermaid ids are case-sensitive, but
            candidate = f"{base}_{suffix}"  # keeping them apart case-insensitively is safer
            suffix += 1
        self._used.add(candidate.lower())
        self._ids[key] = candidate
        return candidate


def quote(text: str) -> str:
    """`text` as a quoted Mermaid label: quotes escaped, on one line."""
    flat = " ".join(str(text).split())
    return '"' + flat.replace('"', "#quot;") + '"'


def node_line(node_id: str, label: str, shape: str = "box") -> str:
    """One node declaration: a box for agents, a stadium for START/END, a hexagon for routers."""
    text = quote(label)
    if shape == "terminal":
        return f"    {node_id}([{text}])"
    if shape == "router":
        return f"    {node_id}{{{{{text}}}}}"
    return f"    {node_id}[{text}]"


def edge_line(source: str, target: str, label: str | None = None, *, dotted: bool = False) -> str:
    """One edge, with its label when it has one."""
    arrow = "-.->" if dotted else "-->"
    if label:
        return f"    {source} {arrow}|{quote(label)}| {target}"
    return f"    {source} {arrow} {target}"


def router_kind(router: Any) -> str:
    """A short, human description of a router: its `kind`, else what kind of callable it is."""
    kind = getattr(router, "kind", None)
    if isinstance(kind, str) and kind:
        return kind
    if inspect.isfunction(router) or inspect.ismethod(router):
        name = router.__name__
        return "function" if name == "<lambda>" else f"function {name}"
    return type(router).__name__


def network_mermaid(network: NetworkLike) -> str:
    """The network as a Mermaid `flowchart TD`.

    Uses the router's own `to_mermaid()` when it has one (given the network's handoffs when
    it takes them, as the graph router does). A network led by its handoffs (no router given:
    `network.run.handoff_router`) is drawn as START to the first agent and an edge labelled
    "handoff" from each agent to each agent it may hand off to. Any other router is drawn as
    a router node, labelled with the router's kind, with a dotted edge to every agent it may
    choose, plus the handoff edges.
    """
    router = network.router
    handoffs = [
        (source, target)
        for source, target in getattr(network, "handoff_edges", ())
        if target in network.agents
    ]
    draw = getattr(router, "to_mermaid", None)
    if callable(draw):
        if handoffs and "handoffs" in inspect.signature(draw).parameters:
            return str(draw(handoffs=handoffs))
        return str(draw())
    ids = MermaidIds()
    entry = getattr(router, "entry", None) if getattr(router, "kind", None) == "handoffs" else None
    if entry is not None:
        start_id = ids(("START",), "START")
        lines = ["flowchart TD", node_line(start_id, "START", "terminal")]
        for name in network.agents:
            lines.append(node_line(ids(("agent", name), name), name))
        lines.append(edge_line(start_id, ids(("agent", entry), entry)))
    else:
        router_id = ids(("router",), "router")
        kind = router_kind(router)
        lines = ["flowchart TD", node_line(router_id, f"router: {kind}", "router")]
        for name in network.agents:
            agent_id = ids(("agent", name), name)
            lines.append(node_line(agent_id, name))
            lines.append(edge_line(router_id, agent_id, dotted=True))
    for source, target in handoffs:
        lines.append(
            edge_line(ids(("agent", source), source), ids(("agent", target), target), "handoff")
        )
    return "\n".join(lines) + "\n"
