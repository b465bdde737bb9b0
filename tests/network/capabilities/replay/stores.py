"""Reading a recorded thread back as the database holds it."""

from __future__ import annotations

from typing import Any

from network.threads import DecodedCache, MemoryStore, SQLStore


async def read_back(store: Any, thread_id: str) -> Any:
    """The thread as the database holds it (a new store with a cold cache), or as the memory
    store holds it."""
    if isinstance(store, MemoryStore):
        return await store.get_thread(thread_id)
    fresh = SQLStore(store.url, cache=DecodedCache())
    try:
        return await fresh.get_thread(thread_id)
    finally:
        await fresh.close()
