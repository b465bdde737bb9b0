"""agent-network's installed version: what it tells the software it meets.

An MCP server's and client's `serverInfo` / `clientInfo`, and the OpenTelemetry instrumentation
scope of every span and metric, carry it, so a receiver or an Inspector shows which release
produced what it reads.
"""

from __future__ import annotations

import functools

UNKNOWN_VERSION = "0+unknown"  # a checkout run without being installed


@functools.cache
def library_version() -> str:
    """agent-network's installed version (`importlib.metadata`), or "0+unknown" when it runs
    from a checkout that was never installed."""
    import importlib.metadata  # noqa: PLC0415 (it loads email and more: only when asked)

    try:
        return importlib.metadata.version("agent-network")
    except importlib.metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


__all__ = ["UNKNOWN_VERSION", "library_version"]
