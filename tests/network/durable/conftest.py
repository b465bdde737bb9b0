"""Fixtures of the durable tests: a fresh DBOS system database per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos")

from dbos import DBOS, DBOSClient

from network.durable.engine import APP_NAME


@pytest.fixture(params=["sqlite", "postgres"])
def durable_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A DBOS system database URL: an SQLite file, or a new database on the test server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    server: str = request.getfixturevalue("postgres_url")
    base = server.rsplit("/", 1)[0].replace("postgresql+asyncpg://", "postgresql://")
    return f"{base}/durable_{uuid.uuid4().hex[:10]}"


@pytest.fixture
def client(durable_db: str) -> Iterator[DBOSClient]:
    """A DBOS client (the enqueuing side) on `durable_db`, its schema migrated first."""
    DBOS.migrate(durable_db)
    dbos_client = DBOSClient(system_database_url=durable_db, application_name=APP_NAME)
    try:
        yield dbos_client
    finally:
        dbos_client.destroy()
