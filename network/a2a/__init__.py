"""The network served over A2A (the Agent2Agent protocol, 1.0 and 0.3), on the serving layer
(`network.serving`) beside the AG-UI and MCP servers; built on the official `a2a-sdk` (the
`a2a` extra). See docs/a2a.md.

    from network.a2a import app
    asgi = app(network, store="threads.db")
"""

from network.a2a.card import agent_card
from network.a2a.server import app

__all__ = ["agent_card", "app"]
