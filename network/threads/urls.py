"""The database URL a run's `store=` string or path stands for (see `network.threads.resolve`)."""

from __future__ import annotations

import os

from network.errors import ConfigurationError
from network.redacted import shown_url

DEFAULT_STORE = "agent-network.db"
STORE_ENV = "AGENT_NETWORK_STORE"

_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
}
# the one driver a thread store runs each database on: the store's engine is SQLAlchemy's
# asyncio one, and its own connections beside it take that driver's connection arguments
ASYNC_DRIVERS = {"sqlite": "aiosqlite", "postgresql": "asyncpg"}


def store_url(store: str | os.PathLike[str] | None = None) -> str:
    """The database URL a `store=` string, path or None stands for."""
    if store is None:
        store = os.environ.get(STORE_ENV) or DEFAULT_STORE
    text = os.fspath(store)
    if not text:
        raise ConfigurationError("store= is an empty string; give a file path or a URL")
    scheme, sep, rest = text.partition("://")
    if sep:  # a URL; a bare sqlite:// or postgresql:// gets its async driver
        return f"{_DRIVERS.get(scheme, scheme)}{sep}{rest}"
    return "sqlite+aiosqlite:///" + os.path.abspath(text)


def check_driver(url: str, given: str) -> None:
    """A `ConfigurationError` for a URL of SQLite or PostgreSQL (as `store_url` made it) that
    names another driver than the store's (`postgresql+psycopg://`, `sqlite+pysqlite://`):
    the run failed with the driver's own error when it first opened the store (a TypeError
    about `dbname`, a missing module, SQLAlchemy's "requires an async driver"). `given`: the
    URL as shown in the error (its password hidden)."""
    scheme = url.partition("://")[0]
    backend, _, driver = scheme.partition("+")
    wanted = ASYNC_DRIVERS.get(backend)
    if wanted is not None and driver != wanted:
        raise ConfigurationError(
            f"store {given!r} names the {driver!r} driver; a thread store runs {backend} on "
            f"{wanted}: give a {backend}:// or {backend}+{wanted}:// URL"
        )


def check_store_url(store: str | os.PathLike[str]) -> str:
    """The database URL of `store=` (`store_url`), if a thread store takes it: an SQLite
    file or a PostgreSQL database (`SQLStore`'s rule), else `ConfigurationError` naming it.
    For a caller that only records the string (a durable run's `enqueue`): the store that
    opens it, later and elsewhere, would refuse it there."""
    url = store_url(store)
    given = shown_url(os.fspath(store))
    scheme, _, rest = url.partition("://")
    backend = scheme.partition("+")[0]
    if backend not in ("sqlite", "postgresql"):
        raise ConfigurationError(
            f"store= must be an SQLite file path or a sqlite:// or postgresql:// URL, got "
            f"{given!r}: thread stores keep threads in SQLite or PostgreSQL only"
        )
    check_driver(url, given)
    path, _, query = rest.partition("?")
    if backend == "sqlite" and (path.lstrip("/") in ("", ":memory:") or "memory" in query):
        raise ConfigurationError(
            f"store= {given!r} is an in-memory SQLite database, which no other "
            "process can open: give an SQLite file path"
        )
    return url


__all__ = [
    "ASYNC_DRIVERS",
    "DEFAULT_STORE",
    "STORE_ENV",
    "check_driver",
    "check_store_url",
    "shown_url",
    "store_url",
]
