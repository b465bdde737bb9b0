"""Mermaid drawing helpers for routers that know their topology (`to_mermaid()`).

The drawing itself lives in `network.drawing` (the CLI draws networks without importing
`routers`); this module is the routers' short address for it.
"""

from __future__ import annotations

from network.drawing import MermaidIds, edge_line, network_mermaid, node_line, quote, router_kind

__all__ = ["MermaidIds", "edge_line", "network_mermaid", "node_line", "quote", "router_kind"]
