"""Fixtures of the durable tests: a fresh DBOS system database per test."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

pytest.importorskip("dbos")


@pytest.fixture(params=["sqlite", "postgres"])
def durable_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A DBOS system database URL: an SQLite file, or a new database on the test server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    server: str = request.getfixturevalue("postgres_url")
    base = server.rsplit("/", 1)[0].replace("postgresql+asyncpg://", "postgresql://")
    return f"{base}/durable_{uuid.uuid4().hex[:10]}"
