"""Loading the mcp SDK, once per process, without stalling the event loop.

`import agents` does not load the SDK: the first connection does. Importing it takes about
2 s of CPU (seconds more on a loaded machine), and an import inside a coroutine holds the
event loop that long: every other run and stream of the process, and the connection's own
deadline, which could not fire until the import was over (`connect_timeout=2` failed a cold
program's run after 5.6 s). So the SDK is imported in a worker thread, under the connection's
deadline: past it the connection fails at its deadline, saying the SDK was still loading, and
the import goes on in its thread for the next connection.
"""

from __future__ import annotations

import anyio.to_thread

_loaded: list[bool] = []  # one entry once the SDK is imported


async def load_sdk() -> None:
    """Import the mcp SDK in a worker thread (at once when it is already loaded).

    Raises `ImportError` saying what to install when it is missing or too old.
    """
    if _loaded:
        return
    try:
        await anyio.to_thread.run_sync(_import, abandon_on_cancel=True)
    except ImportError as exc:  # not installed, or a 1.x SDK without `Client`
        raise ImportError(
            "MCP servers need the mcp SDK 2.3 or later: pip install 'agent-network[mcp]'"
        ) from exc
    _loaded.append(True)


def loaded() -> bool:
    """Whether the SDK has been imported."""
    return bool(_loaded)


def _import() -> None:
    from mcp import Client  # noqa: F401, PLC0415 (mcp: loaded on first use, in a thread)
