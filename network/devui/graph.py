"""The network's graph as data for the page: nodes and edges, read from its Mermaid drawing.

`network.drawing.network_mermaid` already knows how to draw every network (a router that knows
its topology draws itself; any other router is one node with a dotted edge to every agent). The
page needs the same picture as data, to highlight the agent that is running, so the drawing's
own lines (written by `node_line` / `edge_line`) are read back here rather than drawn twice.
"""

from __future__ import annotations

import re
from typing import Any

from network.drawing import network_mermaid
from network.run.context import NetworkLike

_NODE = re.compile(r'^\s*(\w+)(\(\[|\{\{|\[)"(.*)"(\]\)|\}\}|\])\s*$')
_EDGE = re.compile(r'^\s*(\w+) (-->|-\.->)(?:\|"(.*)"\|)? (\w+)\s*$')
_SHAPES = {"([": "terminal", "{{": "router", "[": "box"}


def _label(text: str) -> str:
    return text.replace("#quot;", '"')


def network_graph(network: NetworkLike) -> dict[str, Any]:
    """`{"name", "mermaid", "nodes": [{id, label, shape, agent}], "edges": [{source, target,
    label, dotted}]}`; a node's `agent` is the agent it stands for (None for START, END and
    routers)."""
    mermaid = network_mermaid(network)
    agents = set(network.agents)
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    for line in mermaid.splitlines()[1:]:
        node = _NODE.match(line)
        if node is not None:
            node_id, opening, label, _ = node.groups()
            shape = _SHAPES.get(opening, "box")
            text = _label(label)
            agent = text if shape == "box" and text in agents else None
            nodes.append({"id": node_id, "label": text, "shape": shape, "agent": agent})
            continue
        edge = _EDGE.match(line)
        if edge is not None:
            source, arrow, label, target = edge.groups()
            edges.append(
                {
                    "source": source,
                    "target": target,
                    "label": _label(label) if label else None,
                    "dotted": arrow == "-.->",
                }
            )
    return {"name": network.name, "mermaid": mermaid, "nodes": nodes, "edges": edges}
