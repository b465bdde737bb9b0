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


__all__ = ["DEFAULT_STORE", "STORE_ENV", "shown_url", "store_url"]
