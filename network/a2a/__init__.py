"""The network served over A2A (the Agent2Agent protocol, 1.0 and 0.3), on the serving layer
(`network.serving`) beside the AG-UI and MCP servers; built on the official `a2a-sdk` (the
`a2a` extra). See docs/a2a.md.

    from network.a2a import app
    asgi = app(network, store="threads.db")

Importing this package is cheap: the server (the SDK's request handlers and routes, FastAPI)
loads when `app` or `agent_card` is first used, so a process that only keeps task records
(`network.a2a.tasks`) does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from network.a2a.card import agent_card
    from network.a2a.server import app

__all__ = ["agent_card", "app"]


def __getattr__(name: str) -> Any:
    if name == "agent_card":
        from network.a2a.card import agent_card  # noqa: PLC0415 (a2a-sdk)

        return agent_card
    if name == "app":
        from network.a2a.server import app  # noqa: PLC0415 (a2a-sdk, FastAPI)

        return app
    raise AttributeError(name)
