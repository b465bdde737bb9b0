"""AG-UI: serve a network to any AG-UI client over HTTP (Server-Sent Events).

    from network.agui import app
    asgi = app(network)            # then: uvicorn module:asgi
    asgi = app(network, authorize=fn)   # fn(request, thread_id) -> user id (see .auth)

Importing this package is cheap: Starlette and the server load when `app` is first used.
See `network.agui.server` for the protocol details.
"""

from __future__ import annotations

from typing import Any

from network.agui.auth import Forbidden, Unauthorized
from network.serving.registry import ThreadRegistry

__all__ = ["Forbidden", "ThreadRegistry", "Unauthorized", "app"]


def __getattr__(name: str) -> Any:
    if name == "app":
        from network.agui.server import app  # noqa: PLC0415 (starlette)

        return app
    raise AttributeError(name)
