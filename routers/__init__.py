"""Ready routers: `sequence`, `routing_agent` (an LLM choosing), and a networkx graph router.

`network_mermaid(network)` draws any network's topology as a Mermaid flowchart. Importing this
package imports neither networkx nor litellm: each is loaded when a router first needs it.
"""

# Imported eagerly on purpose: `routing_agent` and `sequence` are also submodule names, and a
# lazy `__getattr__` would hand out the module instead of the function once anyone imported
# the submodule directly.
from routers.graph import END, GraphRouter
from routers.mermaid import network_mermaid
from routers.routing_agent import RoutingAgent, routing_agent
from routers.sequence import sequence

__all__ = [
    "END",
    "GraphRouter",
    "RoutingAgent",
    "network_mermaid",
    "routing_agent",
    "sequence",
]
