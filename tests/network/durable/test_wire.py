"""`network.durable.wire`: a statement sent on a connection's libpq handle reads and writes
what psycopg would, raises the server's errors as psycopg does, is prepared once per
connection, and a connection that fails raises psycopg's `OperationalError`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from network.durable import wire

pytestmark = pytest.mark.anyio
on_postgres = pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)


@pytest.fixture
async def connection(durable_db: str) -> AsyncIterator[Any]:
    server = durable_db.rsplit("/", 1)[0] + "/postgres"
    name = durable_db.rsplit("/", 1)[1]
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    conn = await psycopg.AsyncConnection.connect(durable_db, autocommit=True)
    await conn.execute(
        "CREATE TABLE t (id integer PRIMARY KEY, name text, big bigint, flag boolean)"
    )
    try:
        yield conn
    finally:
        await conn.close()


async def test_named_placeholders_become_numbered_ones_once_per_name() -> None:
    form = wire.shape("SELECT %(a)s, %(b)s, %(a)s, 5 %% 2")
    assert form == wire.Shape(b"SELECT $1, $2, $1, 5 % 2", ("a", "b"))


@on_postgres
async def test_values_go_and_come_back_as_psycopg_reads_them(connection: Any) -> None:
    insert = (
        "INSERT INTO t VALUES (%(id)s, %(name)s, %(big)s, %(flag)s) RETURNING id, name, big, flag"
    )
    row = {"id": 1, "name": "é'; --", "big": 2**40, "flag": True}
    assert await wire.execute(connection, insert, row) == [(1, "é'; --", 2**40, True)]
    none = {"id": 2, "name": None, "big": None, "flag": False}
    assert await wire.execute(connection, insert, none) == [(2, None, None, False)]
    cursor = await connection.execute("SELECT id, name, big, flag FROM t ORDER BY id")
    assert await cursor.fetchall() == [(1, "é'; --", 2**40, True), (2, None, None, False)]
    empty = await wire.execute(connection, "SELECT id FROM t WHERE id = %(id)s", {"id": 9})
    assert empty == []
    assert await wire.execute(connection, "UPDATE t SET big = 1", {}) == []


@on_postgres
async def test_a_statement_is_prepared_once_per_connection(connection: Any) -> None:
    select = "SELECT count(*) FROM t WHERE id > %(low)s"
    for _ in range(3):
        assert await wire.execute(connection, select, {"low": 0}) == [(0,)]
    cursor = await connection.execute(
        "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%%$1%%'"
    )
    assert await cursor.fetchone() == (1,)


@on_postgres
async def test_a_long_statement_is_sent_whole(connection: Any) -> None:
    text = "x" * 3_000_000  # more than a socket's buffer: sent as the socket drains
    insert = "INSERT INTO t (id, name) VALUES (%(id)s, %(name)s) RETURNING length(name)"
    assert await wire.execute(connection, insert, {"id": 3, "name": text}) == [(3_000_000,)]


@on_postgres
async def test_the_servers_errors_are_raised_as_psycopg_raises_them(connection: Any) -> None:
    insert = "INSERT INTO t (id) VALUES (%(id)s)"
    await wire.execute(connection, insert, {"id": 4})
    with pytest.raises(psycopg.errors.UniqueViolation):
        await wire.execute(connection, insert, {"id": 4})
    with pytest.raises(psycopg.errors.UndefinedTable):
        await wire.execute(connection, "SELECT * FROM nowhere", {})
    assert await wire.execute(connection, "SELECT 1", {}) == [(1,)]  # still usable
    with pytest.raises(TypeError, match="float"):
        await wire.execute(connection, "SELECT %(x)s", {"x": 1.5})


@on_postgres
async def test_a_connection_that_failed_raises_an_operational_error(
    connection: Any, durable_db: str
) -> None:
    (pid,) = await wire.execute(connection, "SELECT pg_backend_pid()", {})
    with psycopg.connect(durable_db, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid[0],))
    with pytest.raises(psycopg.OperationalError):
        await wire.execute(connection, "SELECT 1", {})
