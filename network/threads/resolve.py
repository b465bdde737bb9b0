"""Turning the `store=` argument of a run into a thread store.

Decisions:
- `store=None` with a thread id means the default: the URL in the `AGENT_NETWORK_STORE`
  environment variable if set, else the SQLite file `agent-network.db` in the current
  directory (created on first use). SQLite is embedded, so persistence works with no server.
- A string with `://` is a database URL (`sqlite+aiosqlite:///path.db`,
  `postgresql+asyncpg://user:pw@host/db`; bare `sqlite://` and `postgresql://` get their async
  driver). Any other string or path is an SQLite file.
- A store opened from a URL or path belongs to the run: it is closed when the run ends, so
  that no connection outlives the event loop it was made on. Pass a store object to keep
  connections across runs; the run never closes a store it was given.
"""

from __future__ import annotations

import os
from typing import Any

from network.errors import ConfigurationError
from network.threads.protocol import ThreadStore
from network.threads.urls import DEFAULT_STORE, STORE_ENV, store_url

__all__ = ["DEFAULT_STORE", "STORE_ENV", "open_store", "store_url"]


# Classes whose objects were found to be thread stores: checking a runtime protocol takes
# tens of microseconds, and a server opens a session per request.
_STORE_TYPES: set[type] = set()


def open_store(store: Any = None) -> tuple[ThreadStore, bool]:
    """The store a run should use, and whether the run owns it (and must close it)."""
    if store is None or isinstance(store, str | os.PathLike):
        from network.threads.sql import SQLStore  # noqa: PLC0415 (sqlalchemy)

        return SQLStore(store_url(store)), True
    kind = type(store)
    if kind in _STORE_TYPES or isinstance(store, ThreadStore):
        _STORE_TYPES.add(kind)
        return store, False
    raise ConfigurationError(
        f"store= must be a thread store, a database URL or an SQLite file path, got {store!r}"
    )
