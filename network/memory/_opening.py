"""Opening a memory store's backend from what `Memories(store)` was given (the thread store's
URLs), and the database errors its backends raise (turned into `MemoryDatabaseError`)."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from network.errors import ConfigurationError
from network.memory._backend import Backend
from network.threads.urls import store_url

__all__ = ["IN_PROCESS", "backend_for", "database_errors"]

IN_PROCESS = "memory://"
"""The `store` of memories kept in this process only."""


def database_errors() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = [OSError, sqlite3.Error, UnicodeError]
    try:
        import sqlean  # noqa: PLC0415 (optional)

        found.append(sqlean.Error)
    except ImportError:
        pass
    try:
        import asyncpg  # noqa: PLC0415 (loaded only when a PostgreSQL store is used)

        found += [asyncpg.PostgresError, asyncpg.InterfaceError]
    except ImportError:
        pass
    return tuple(found)


def backend_for(
    store: Any, prefix: str, vector_index: bool | None, ef_search: int, pool_size: int
) -> tuple[str, Backend]:
    """The URL `store` stands for, and its backend."""
    if store == IN_PROCESS:
        from network.memory._local import LocalBackend  # noqa: PLC0415 (one backend loads)

        return IN_PROCESS, LocalBackend()
    url = getattr(store, "url", None)  # a thread SQLStore: its database
    if not isinstance(url, str):
        if store is not None and not isinstance(store, str | os.PathLike):
            raise ConfigurationError(
                f"Memories: store must be 'memory://', a path, a database URL or a thread "
                f"SQLStore, got {store!r}"
            )
        url = store_url(store)
    scheme, _, rest = url.partition("://")
    dialect = scheme.split("+")[0]
    if dialect == "sqlite":
        path = rest[1:] if rest.startswith("/") else rest
        if path in ("", ":memory:") or path.startswith(":memory:") or "mode=memory" in path:
            raise ConfigurationError(
                "Memories: an in-memory SQLite database cannot be shared; use 'memory://' "
                "for memories kept in this process"
            )
        from network.memory._sqlite import SQLiteBackend  # noqa: PLC0415 (one backend loads)

        return url, SQLiteBackend(
            path.split("?")[0], table_prefix=prefix, vector_index=vector_index
        )
    if dialect in ("postgresql", "postgres"):
        from network.memory._postgres import PostgresBackend  # noqa: PLC0415 (one backend loads)

        return url, PostgresBackend(
            f"postgresql://{rest}", table_prefix=prefix, ef_search=ef_search, pool_size=pool_size
        )
    raise ConfigurationError(f"Memories: SQLite and PostgreSQL are supported, not {dialect!r}")
