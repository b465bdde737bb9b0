"""One pooled `httpx.AsyncClient` per (base URL, API key) and event loop.

Every model on the same server shares one client, so its connections are kept alive across
calls and runs. httpx's connections belong to the event loop that opened them, so the pool is
kept per loop (a weak key: a finished loop's clients go with it); one process usually runs
one loop. No timeout is set on the client: a call's deadline covers the whole exchange,
stream included (see `openai_native`), which a per-read timeout cannot do.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

_pools: weakref.WeakKeyDictionary[Any, dict[tuple[str, str | None], Any]] = (
    weakref.WeakKeyDictionary()
)


def shared_client(base_url: str, api_key: str | None) -> Any:
    """The `httpx.AsyncClient` for this server and key on the running event loop."""
    loop = _current_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = {}
    key = (base_url, api_key)
    client = pool.get(key)
    if client is None or client.is_closed:
        client = pool[key] = _new_client(api_key)
    return client


async def close_clients() -> None:
    """Close the running loop's pooled clients (a server shutting down may call this)."""
    pool = _pools.pop(_current_loop(), {})
    for client in pool.values():
        await client.aclose()


def _new_client(api_key: str | None) -> Any:
    import httpx  # noqa: PLC0415 (httpx: loaded by the first model call, not by import agents)

    headers = {"content-type": "application/json", "accept": "application/json"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=100)
    return httpx.AsyncClient(headers=headers, timeout=None, limits=limits)


def _current_loop() -> Any:
    # The native client runs on asyncio (what anyio's default backend and uvicorn run), so
    # asyncio is loaded by now; read from sys.modules to keep it off `import agents`.
    return sys.modules["asyncio"].get_running_loop()
