"""Ready routers: `sequence`, `routing_agent` (an LLM choosing), and a networkx graph router."""

from routers.sequence import sequence

__all__ = ["sequence"]
