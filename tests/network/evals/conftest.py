"""The evaluation tests share the replay tests' stores (memory, SQLite, PostgreSQL)."""

from tests.network.capabilities.replay.conftest import store

__all__ = ["store"]
