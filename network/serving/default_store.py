"""`default_memory_store()`: the thread store a server keeps when it is given none.

A server's threads are what strangers make it hold, so the `MemoryStore` a server makes for
itself is bounded as the AG-UI server's own memory of its threads is
(`network.serving.registry`): at most `DEFAULT_MAX_THREADS` threads and `DEFAULT_MAX_BYTES`
of their records, the least recently used forgotten first, never one a run holds.
"""

from __future__ import annotations

from network.serving.registry import DEFAULT_MAX_BYTES, DEFAULT_MAX_THREADS
from network.threads.memory import MemoryStore


def default_memory_store() -> MemoryStore:
    """A `MemoryStore` with the serving layer's bounds (see the module docstring)."""
    return MemoryStore(max_threads=DEFAULT_MAX_THREADS, max_bytes=DEFAULT_MAX_BYTES)
