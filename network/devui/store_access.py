"""The dev server's read-only access to the configured thread store.

The store is given as a `ThreadStore` (used as it is, never closed here) or as a URL or an
SQLite path (opened for each request and closed after it, so no connection outlives the event
loop that made it). The dev UI only reads: an SQLite file that does not exist yet is a store
with no threads, not a reason to create one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from network.threads.resolve import open_store
from network.threads.urls import store_url


def _missing_sqlite_file(store: Any) -> bool:
    if not isinstance(store, str | os.PathLike) and store is not None:
        return False
    url = store_url(store)
    scheme, _, rest = url.partition("://")
    if not scheme.startswith("sqlite"):
        return False
    path = rest[1:] if rest.startswith("/") else rest  # sqlite+aiosqlite:///<path>
    path = path.split("?", 1)[0]
    return bool(path) and not Path(path).exists()


@contextlib.asynccontextmanager
async def reading(store: Any) -> AsyncIterator[Any | None]:
    """The store to read from (None: an SQLite file that does not exist, so no threads)."""
    if _missing_sqlite_file(store):
        yield None
        return
    opened, owned = open_store(store)
    try:
        yield opened
    finally:
        if owned:
            await opened.close()
