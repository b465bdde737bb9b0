"""The dev UI: a local web page to watch a network run, step by step, and replay stored threads.

    agent-network dev examples/codegen.py:network          # http://127.0.0.1:8000/

    from network.devui import app
    asgi = app(network, store="agent-network.db")           # then: uvicorn module:asgi

One ASGI app (Starlette) serves the page (plain HTML, CSS and JavaScript shipped in the
package: no build step), the AG-UI endpoint the page runs the network through (`/agui/`, the
`network.agui` server itself), and a few read-only JSON endpoints: the network's graph and the
threads of the configured store. See `network.devui.server` for the routes and their rules.

Importing this package is cheap: Starlette loads when `app` is first used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["app"]


def __getattr__(name: str) -> Any:
    if name == "app":
        from network.devui.server import app  # noqa: PLC0415 (starlette)

        return app
    raise AttributeError(name)
