"""One pooled `aiohttp.ClientSession` per (base URL, API key) and event loop.

Every model on the same server shares one session, so its connections are kept alive across
calls and runs. Why aiohttp: measured against the same local server in one process, a bare
POST-and-parse loop costs about a quarter of the CPU per call through aiohttp that it costs
through httpx (`benchmarks/transports.py`); the transport, not this library, decided what a
model call cost.

Decisions written down here:

- A session's connections belong to the event loop that opened them, so the pool is kept per
  loop. When that loop shuts down (`asyncio.run`, `anyio.run` and uvicorn all close a loop's
  async generators first), its sessions are closed and forgotten: a program that calls
  `network.run_sync` many times keeps no sockets, nor loops, from earlier calls.
- No timeout is set on the session: a call's deadline covers the whole exchange, stream
  included (`anyio.fail_after` in `retrying`), which a per-read timeout cannot do.
- Proxies: the environment's `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` are honoured, as httpx
  did, read once when a server's session is made (aiohttp's own `trust_env` would look them
  up, and `.netrc`, in a worker thread on every request). No cookies are kept: a model
  server's cookies must not travel from one agent's call to another's.
- Unlimited connections per host: concurrent runs must not queue behind a pool limit; the
  server (or its load balancer) says how many it serves.
- An idle connection is reused for `KEEPALIVE_S` (4 s), not aiohttp's 15: the servers people
  run models behind close idle connections sooner (uvicorn, which llama-cpp-python's and
  vLLM's servers run on, after 5 s; Node after 5 s). A connection the server closed while
  this event loop was busy still looks open, and a request sent on it failed with
  `ServerDisconnectedError`: an attempt lost (a failed chat span, a retry; with
  `max_retries=0` a failed call). Past `KEEPALIVE_S` of idleness it is dropped when taken
  from the pool, whatever the loop did meanwhile.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import AsyncIterator
from typing import Any

KEEPALIVE_S = 4.0  # below the 5 s after which uvicorn and Node close an idle connection

# loop -> {(base URL, key): session}; the closer keeps the entry alive until the loop ends.
_pools: weakref.WeakKeyDictionary[Any, dict[tuple[str, str | None], Any]] = (
    weakref.WeakKeyDictionary()
)
_closers: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


async def shared_client(base_url: str, api_key: str | None) -> tuple[Any, str | None]:
    """The `aiohttp.ClientSession` for this server and key on the running event loop, and
    the proxy URL to send its requests through (None: straight to the server)."""
    loop = _current_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = {}
        closer = _closers[loop] = _close_at_shutdown(pool)
        await closer.__anext__()  # suspended in its `try`: the loop finalizes it at shutdown
    key = (base_url, api_key)
    entry = pool.get(key)
    if entry is None or entry[0].closed:
        entry = pool[key] = (_new_client(api_key), _proxy_for(base_url))
    return entry


async def close_clients() -> None:
    """Close the running loop's pooled sessions (a server shutting down may call this)."""
    loop = _current_loop()
    pool = _pools.pop(loop, {})
    _closers.pop(loop, None)
    for client, _ in pool.values():
        await client.close()


async def _close_at_shutdown(pool: dict[Any, Any]) -> AsyncIterator[None]:
    # An async generator left suspended: `loop.shutdown_asyncgens()` (which asyncio.run,
    # anyio.run and uvicorn call before closing the loop) resumes it with GeneratorExit.
    try:
        yield
    finally:
        for client, _ in pool.values():
            await client.close()
        pool.clear()


def _new_client(api_key: str | None) -> Any:
    import aiohttp  # noqa: PLC0415 (aiohttp: loaded by the first model call, not by import agents)

    headers = {"content-type": "application/json", "accept": "application/json"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, keepalive_timeout=KEEPALIVE_S)
    return aiohttp.ClientSession(
        headers=headers,
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=None),
        cookie_jar=aiohttp.DummyCookieJar(),
    )


def _proxy_for(base_url: str) -> str | None:
    """The environment's proxy for `base_url`, honouring NO_PROXY; None when there is none."""
    import urllib.request  # noqa: PLC0415 (read once per server)
    from urllib.parse import urlsplit  # noqa: PLC0415

    parts = urlsplit(base_url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def _current_loop() -> Any:
    # The native client runs on asyncio (what anyio's default backend and uvicorn run), so
    # asyncio is loaded by now; read from sys.modules to keep it off `import agents`.
    return sys.modules["asyncio"].get_running_loop()
