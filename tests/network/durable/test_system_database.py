"""How durable runs use DBOS's system database: SQLite in write-ahead-log mode (synced as
before), and PostgreSQL connections used without a ping, a dropped one costing nothing."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import anyio
import psycopg
import pytest

from network import durable
from tests.network.durable.crash_network import team

pytestmark = pytest.mark.usefixtures("effects_log")


@pytest.fixture
def effects_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AN_DURABLE_LOG", str(tmp_path / "effects.log"))


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)
def test_an_sqlite_system_database_is_put_in_write_ahead_log_mode(durable_db: str) -> None:
    durable.launch([team], db=durable_db)
    try:
        result = anyio.run(lambda: team.run("go", durable=True, run_id="wal-run"))
    finally:
        durable.shutdown()
    assert result.state.snapshot()["count"] == 2
    path = durable_db.removeprefix("sqlite:///")
    with sqlite3.connect(path) as connection:  # the mode is the file's, for every process
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        steps = connection.execute(
            "SELECT COUNT(*) FROM operation_outputs WHERE workflow_uuid = 'wal-run'"
        ).fetchone()
    assert steps == (12,)  # run_started and the 11 side effects of crash_network.SEQUENCE


@pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)
def test_runs_go_on_when_the_server_drops_every_connection_between_steps(
    durable_db: str,
) -> None:
    durable.launch([team], db=durable_db)
    try:
        first = anyio.run(lambda: team.run("go", durable=True, run_id=f"a-{uuid.uuid4().hex}"))
        # the server ends every session of the pool: connections that are not pinged before
        # use fail their first statement, which DBOS retries on a new connection
        with psycopg.connect(durable_db, autocommit=True) as admin:
            dropped = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
        assert dropped is not None and dropped[0] > 0
        second = anyio.run(lambda: team.run("go", durable=True, run_id=f"b-{uuid.uuid4().hex}"))
    finally:
        durable.shutdown()
    assert first.state.snapshot() == second.state.snapshot()
    assert second.output == first.output
